package workshop

import (
	"fmt"
	"strings"

	"idemlab/lab/report"
)

// The database at a step, in words: what the terminal stepper prints after
// each move, from the state the engine recorded at each node of the tree
// (report.DBState). The page draws the same state as a panel (step.js).

// brokeAt returns the step along path that first took a balance past what
// exactly once allows (the second credit), or "" if none did.
func brokeAt(t *report.Tree, path []int) string {
	for i := 1; i < len(path); i++ {
		if overcredited(t.Nodes[path[i]].State) && !overcredited(t.Nodes[path[i-1]].State) {
			return t.Nodes[path[i]].Step
		}
	}
	return ""
}

func overcredited(s *report.DBState) bool {
	if s == nil {
		return false
	}
	for _, a := range s.Accounts {
		if a.Overcredited() {
			return true
		}
	}
	return false
}

// stateLines describes the database at the last node of path: each
// balance, and how it moved with the step that led here; the inbox; the
// write lock; what the sessions have read and what is not committed yet.
func stateLines(t *report.Tree, path []int) []string {
	n := t.Nodes[path[len(path)-1]]
	st := n.State
	if st == nil {
		return nil
	}
	var prev *report.DBState
	if len(path) > 1 {
		prev = t.Nodes[path[len(path)-2]].State
	}
	broke := brokeAt(t, path)
	var out []string
	for _, a := range st.Accounts {
		s := fmt.Sprintf("account %d: balance %d", a.ID, a.Balance)
		if was := prev.Account(a.ID); was != nil && was.Balance != a.Balance {
			s = fmt.Sprintf("account %d: balance %d → %d (%s)", a.ID, was.Balance, a.Balance, n.Step)
		}
		switch {
		case a.Overcredited() && broke == n.Step:
			s += fmt.Sprintf("  %s credited twice here: exactly once allows at most %d", report.Fail, a.Most)
		case a.Overcredited():
			s += fmt.Sprintf("  %s credited twice at %s: exactly once allows at most %d", report.Fail, broke, a.Most)
		case a.Unrecorded() != 0:
			s += fmt.Sprintf("  (%d of it has no inbox row yet)", a.Unrecorded())
		}
		out = append(out, s)
	}
	var rows []string
	for _, r := range st.Inbox {
		rows = append(rows, fmt.Sprintf("%s/%s → account %d, %d", r.Source, r.EventID, r.AccountID, r.Amount))
	}
	if len(rows) == 0 {
		rows = []string{"no row"}
	}
	out = append(out, "inbox: "+strings.Join(rows, "; "))
	if st.Unread != "" {
		out = append(out, "(unchanged: "+st.Unread+")")
	}
	out = append(out, "write lock: "+lockWords(n, st))
	if len(st.Reads) > 0 {
		var reads []string
		for _, r := range st.Reads {
			reads = append(reads, r.Step+" "+readWords(r))
		}
		out = append(out, "read: "+strings.Join(reads, "; "))
	}
	if len(st.Pending) > 0 {
		var ws []string
		for _, w := range st.Pending {
			ws = append(ws, fmt.Sprintf("%s %s %s (%s)", w.Step, w.Op, w.Table, report.Count(int(w.Rows), "row", "rows")))
		}
		out = append(out, "not committed, seen by no other session: "+strings.Join(ws, "; "))
	}
	return out
}

// lockWords says who holds the write lock and who waits for it.
func lockWords(n report.Node, st *report.DBState) string {
	s := "free"
	if st.Writer != "" {
		s = "held by " + st.Writer
	}
	if len(st.Readers) > 0 {
		s += "; read lock held by " + strings.Join(st.Readers, ", ")
	}
	var waiting []string
	for _, ss := range n.Sessions {
		if ss.State == report.Waiting {
			waiting = append(waiting, ss.Name)
		}
	}
	if len(waiting) > 0 {
		s += "; " + strings.Join(waiting, ", ") + " waiting"
	}
	return s
}

// readWords says what a SELECT got.
func readWords(r report.SessionRead) string {
	switch {
	case r.Err != "":
		return r.Table + ": error"
	case r.Rows == 0:
		return r.Table + ": no row"
	case r.Rows == 1:
		return r.Table + ": (" + strings.Join(r.First, ", ") + ")"
	}
	return fmt.Sprintf("%s: %d rows, first (%s)", r.Table, r.Rows, strings.Join(r.First, ", "))
}
