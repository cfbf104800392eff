package labtest

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"idemlab/lab"
	"idemlab/lab/report"
)

// traceOf builds the trace of one interleaving from its decisions, the
// database at each of them and at the end (traceState), and its run's
// transcript.
func traceOf(decisions []decision, states []*report.DBState, end *report.DBState, t *Transcript) *report.Trace {
	tr := &report.Trace{Lines: t.Lines(), End: end}
	for i, d := range decisions {
		tr.Decisions = append(tr.Decisions, report.Decision{Sessions: d.view, Lines: d.lines, State: states[i]})
	}
	return tr
}

// view describes every session as the scheduler sees it before a decision.
// A waiting session waits on the sessions that are inside a transaction:
// SQLite has one writer, so the lock it needs is held by one of them.
func (sc *scheduler) view() []report.SessionState {
	answers := map[string]string{}
	sc.db.mu.Lock()
	for _, a := range sc.db.answers {
		answers[a.Session] = a.String()
	}
	sc.db.mu.Unlock()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []report.SessionState
	for _, s := range sc.sessions {
		st := report.SessionState{Name: s.name}
		switch {
		case s.parkedAt != nil:
			st.State, st.Step, st.Text = report.Ready, s.parkedAt.label(), escapeControls(s.parkedAt.Text())
		case s.waiting && s.blockedAt != nil:
			st.State, st.Step, st.Text = report.Waiting, s.blockedAt.label(), escapeControls(s.blockedAt.Text())
			for _, o := range sc.sessions {
				if o != s && o.inTx && !o.done {
					st.WaitingOn = append(st.WaitingOn, o.name)
				}
			}
		default:
			st.State, st.Answer = report.Done, escapeControls(answers[s.name])
		}
		out = append(out, st)
	}
	return out
}

// label names a statement as a schedule does: "B2".
func (s *stmt) label() string { return s.Session + strconv.Itoa(s.N) }

// traceState is the database as the stepper shows it at a decision of a
// scheduled run, or at its end: the committed tables, read without waiting
// for a lock (peek), so that reading them moves no session; who holds the
// locks, what each session has read and what its open transaction has
// written, from its statements; and each account's most that exactly once
// allows, from the events the run delivers. prev is the previous node's
// state: when a COMMIT holds the lock readers need, its tables stand.
func (db *DB) traceState(events []lab.Event, prev *report.DBState) *report.DBState {
	st := &report.DBState{Inbox: []report.InboxRow{}}
	snap, err := db.peek()
	if err != nil {
		if prev == nil || !errors.Is(lab.Classify(err), lab.ErrBusy) {
			db.run.tb.Fatalf("reading accounts and inbox for the stepper: %v", err)
		}
		// A COMMIT that waits for a reader holds SQLite's PENDING lock,
		// which keeps new readers out; it commits once it has the lock,
		// so nothing has committed since the previous node.
		st.Accounts, st.Inbox = prev.Accounts, prev.Inbox
		st.Unread = "a COMMIT waiting for the lock keeps new readers out (SQLite's PENDING lock): the tables are as at the previous step, and nothing has committed since"
	} else {
		most := maps.Clone(db.initial)
		seen := map[lab.Key]map[int64]int64{} // the largest amount of each key, per account
		for _, e := range events {
			if seen[e.Key()] == nil {
				seen[e.Key()] = map[int64]int64{}
			}
			if a, ok := seen[e.Key()][e.AccountID]; !ok || e.Amount > a {
				seen[e.Key()][e.AccountID] = e.Amount
			}
		}
		for _, amounts := range seen {
			for id, a := range amounts {
				most[id] += max(a, 0)
			}
		}
		inbox := map[int64]int64{}
		for _, r := range snap.inbox {
			st.Inbox = append(st.Inbox, report.InboxRow{Source: r.Source, EventID: r.EventID, AccountID: r.AccountID, Amount: r.Amount})
			inbox[r.AccountID] += r.Amount
		}
		for _, id := range slices.Sorted(maps.Keys(snap.balances)) {
			st.Accounts = append(st.Accounts, report.AccountState{ID: id, Balance: snap.balances[id], Seed: db.initial[id],
				Inbox: inbox[id], Most: most[id]})
		}
	}
	db.run.Transcript.sessionsSoFar(st, db.pg == nil)
	return st
}

// last returns the last state, or nil.
func last(states []*report.DBState) *report.DBState {
	if len(states) == 0 {
		return nil
	}
	return states[len(states)-1]
}

// sessionsSoFar fills in st what the sessions' statements so far say: each
// SELECT's rows, the writes of each open transaction, and, with locks (on
// SQLite), who holds the write lock and who a read lock, by SQLite's rules
// (https://sqlite.org/lockingv3.html): BEGIN IMMEDIATE or a transaction's
// first write takes the write lock (RESERVED), its first read a read lock
// (SHARED), and its COMMIT or ROLLBACK drops them; a statement that waited
// out the busy timeout takes nothing.
func (t *Transcript) sessionsSoFar(st *report.DBState, locks bool) {
	const none, read, write = 0, 1, 2
	type open struct {
		level  int
		writes []report.Write
	}
	txs := map[string]*open{}
	var order []string
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range t.lines {
		r := l.result
		if l.session == "" || r == nil || r.NotRun {
			continue
		}
		tx := txs[l.session]
		if tx == nil {
			tx = &open{}
			txs[l.session] = tx
			order = append(order, l.session)
		}
		step := l.session + strconv.Itoa(l.step)
		table := tableOf(l.op, l.text)
		if l.op == OpSelect {
			rd := report.SessionRead{Session: l.session, Step: step, Table: table, Rows: r.Rows}
			if r.Err != nil {
				rd.Rows, rd.Err = 0, escapeControls(r.Err.Error())
			}
			for _, v := range r.First {
				rd.First = append(rd.First, escapeControls(literal(v)))
			}
			st.Reads = append(st.Reads, rd)
		}
		switch {
		case l.op == OpCommit || l.op == OpRollback:
			*tx = open{}
		case !r.InTx:
			// Outside a transaction (or on another connection of the
			// pool): it held its locks for itself alone.
		case r.Err != nil && errors.Is(lab.Classify(r.Err), lab.ErrBusy):
			// It waited for a lock and gave up: it took none.
		case l.op == OpInsert || l.op == OpUpdate || l.op == OpDelete:
			tx.level = write
			if r.Err == nil {
				tx.writes = append(tx.writes, report.Write{Session: l.session, Step: step, Op: string(l.op), Table: table, Rows: r.RowsAffected})
			}
		case l.op == OpBegin && (strings.Contains(l.text, "IMMEDIATE") || strings.Contains(l.text, "EXCLUSIVE")):
			tx.level = write
		case l.op == OpSelect && r.Err == nil:
			tx.level = max(tx.level, read)
		}
	}
	for _, s := range order {
		tx := txs[s]
		st.Pending = append(st.Pending, tx.writes...)
		switch {
		case !locks:
		case tx.level == write && st.Writer == "":
			st.Writer = s
		case tx.level == write:
			st.Writer += ", " + s // never on SQLite: it has one writer
		case tx.level == read:
			st.Readers = append(st.Readers, s)
		}
	}
}
