package workshop

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"idemlab/lab/report"
)

// width is the widest line Play writes: a terminal of 100 columns.
const width = 100

// Play walks t with choices read a line at a time from in, for those
// without a browser: the same tree, moves and messages as the page, with no
// terminal control codes (a line-based prompt works over any pipe). It
// returns at q or the end of input.
func Play(in io.Reader, out io.Writer, t *report.Tree) error {
	w := bufio.NewWriter(out)
	defer w.Flush()
	sc := bufio.NewScanner(in)
	path := []int{0}
	visited := map[int]bool{}
	fmt.Fprint(w, wrap(t.Goal, 0))
	fmt.Fprint(w, wrap("Choose which delivery takes its next statement: a session waiting for the write lock "+
		"cannot be chosen; it resumes when the holder's transaction ends.", 0))
	shown := 0 // transcript lines printed so far
	told := -1 // the leaf whose end was told last: told once, until a move
	for {
		n := t.Nodes[path[len(path)-1]]
		below := t.Leaves[n.Below].Lines
		if shown > n.Lines {
			shown = 0 // after undo or restart: show the transcript again from its start
			fmt.Fprintln(w, "--- transcript so far")
		}
		for _, l := range below[shown:n.Lines] {
			fmt.Fprint(w, fit(l))
		}
		shown = n.Lines
		var ready []string
		switch {
		case n.Leaf >= 0 && told == n.Leaf:
			// An input that moved nothing: the end was told already.
		case n.Leaf >= 0:
			told = n.Leaf
			visited[n.Leaf] = true
			leaf := t.Leaves[n.Leaf]
			switch {
			case leaf.Held() && leaf.Neutral != "":
				fmt.Fprint(w, wrap(fmt.Sprintf("%s could not judge the handler: %s; %s", report.Neutral, leaf.Outcome, leaf.Neutral), 2))
			case leaf.Held():
				fmt.Fprintf(w, "%s every guarantee held: %s\n", report.Pass, leaf.Outcome)
			default:
				fmt.Fprintf(w, "%s a guarantee broke: %s\n", report.Fail, leaf.Outcome)
				for _, f := range leaf.Failures {
					fmt.Fprint(w, wrap(report.Fail+" "+f, 2))
				}
				fmt.Fprintln(w, "level won.")
			}
			fmt.Fprint(w, wrap("schedule: "+leaf.Schedule+"   (labtest.Plan accepts it)", 2))
			fmt.Fprintf(w, "explored %d of %d schedules\n", len(visited), len(t.Leaves))
			if t.Breaking == 0 && len(visited) == len(t.Leaves) {
				fmt.Fprint(w, wrap("Every branch tried. "+t.Unbreakable, 0))
			}
		default:
			for _, s := range n.Sessions {
				switch s.State {
				case report.Ready:
					ready = append(ready, strings.ToLower(s.Name))
					fmt.Fprint(w, clip(fmt.Sprintf("%-2s next    %s: %s", s.Name, s.Step, s.Text)))
				case report.Waiting:
					on := "the lock"
					if len(s.WaitingOn) > 0 {
						on = strings.Join(s.WaitingOn, ", ")
					}
					fmt.Fprint(w, clip(fmt.Sprintf("%-2s waiting %s on %s: %s", s.Name, s.Step, on, s.Text)))
				default:
					fmt.Fprint(w, clip(fmt.Sprintf("%-2s done    %s", s.Name, s.Answer)))
				}
			}
		}
		choices := append(ready, "u undo", "r restart", "q quit")
		fmt.Fprintf(w, "[%s] > ", strings.Join(choices, ", "))
		w.Flush()
		if !sc.Scan() {
			fmt.Fprintln(w)
			return sc.Err()
		}
		in := strings.ToUpper(strings.TrimSpace(sc.Text()))
		switch {
		case in == "Q":
			return nil
		case in == "U":
			if len(path) > 1 {
				path, told = path[:len(path)-1], -1
			} else {
				fmt.Fprintln(w, "nothing to undo")
			}
		case in == "R":
			path, told = path[:1], -1
		case n.Next[in] > 0:
			path = append(path, n.Next[in])
		case n.Leaf >= 0:
			fmt.Fprintln(w, "the race is over: u to undo, r to restart, q to quit")
		default:
			fmt.Fprintf(w, "%q cannot step now; type one of: %s\n", in, strings.Join(choices, ", "))
		}
	}
}

// clip cuts a line to width columns, marking the cut with "…".
func clip(s string) string {
	if utf8.RuneCountInString(s) <= width {
		return s + "\n"
	}
	r := []rune(s)
	return string(r[:width-1]) + "…\n"
}

// fit renders a transcript line in width columns: the statement is cut
// short, never its result, which is what the student stepped to see.
func fit(l report.Line) string {
	left := "  " + rawLine(report.Line{Session: l.Session, Step: l.Step, Text: l.Text})
	if l.Result == "" {
		return clip(left)
	}
	right := "  " + l.Result
	room := width - utf8.RuneCountInString(right)
	if room < 40 {
		return clip(left) + clip("      "+l.Result)
	}
	if utf8.RuneCountInString(left) > room {
		left = string([]rune(left)[:room-1]) + "…"
	}
	return left + right + "\n"
}

// wrap is report.Wrap with an indent.
func wrap(s string, indent int) string {
	return report.Wrap(strings.Repeat(" ", indent)+s, indent+2)
}
