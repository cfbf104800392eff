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
	shown := 0  // transcript lines printed so far
	told := -1  // the leaf whose end was told last: told once, until a move
	drawn := -1 // the node whose database was printed last
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
		if at := path[len(path)-1]; at != drawn {
			drawn = at
			for i, s := range stateLines(t, path) {
				head := "  db: "
				if i > 0 {
					head = "      "
				}
				fmt.Fprint(w, report.WrapWidth(head+s, 8, width))
			}
		}
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
					fmt.Fprint(w, fold(fmt.Sprintf("%-2s next    %s: ", s.Name, s.Step), s.Text))
				case report.Waiting:
					on := "the lock"
					if len(s.WaitingOn) > 0 {
						on = strings.Join(s.WaitingOn, ", ")
					}
					fmt.Fprint(w, fold(fmt.Sprintf("%-2s waiting %s on %s: ", s.Name, s.Step, on), s.Text))
				default:
					fmt.Fprint(w, fold(fmt.Sprintf("%-2s done    ", s.Name), s.Answer))
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

// fold writes head and text in width columns, text broken at spaces
// into lines indented under its start: a statement is never cut, down to
// the key it is about (event_id = 'evt-3').
func fold(head, text string) string {
	n := utf8.RuneCountInString(head)
	lines := report.WrapWords(text, width-n, 0)
	for i := range lines {
		if i == 0 {
			lines[i] = head + lines[i]
		} else {
			lines[i] = strings.Repeat(" ", n) + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// fit renders a transcript line in width columns: the statement folded
// under its label, its result after it on the last line if there is room,
// else on a line of its own.
func fit(l report.Line) string {
	left := report.WrapWords("  "+rawLine(report.Line{Session: l.Session, Step: l.Step, Text: l.Text}), width, 6)
	if l.Result != "" {
		last := left[len(left)-1]
		if utf8.RuneCountInString(last)+2+utf8.RuneCountInString(l.Result) <= width {
			left[len(left)-1] = last + "  " + l.Result
		} else {
			left = append(left, report.WrapWords("      "+l.Result, width, 8)...)
		}
	}
	return strings.Join(left, "\n") + "\n"
}

// wrap is report.Wrap with an indent.
func wrap(s string, indent int) string {
	return report.Wrap(strings.Repeat(" ", indent)+s, indent+2)
}
