package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"idemlab/lab/report"
)

// Progress: the matrix takes seconds, a cold first run a minute, and a
// command that prints nothing for that long looks hung. On a terminal the
// command runs go test with -json and turns its stream of events into one
// line that it rewrites in place: "compiling…" until the first test
// starts, then the cells done out of the total the test announces. Piped
// output gets none of it, so that what a program reads stays clean.

// isTerminal reports whether f is a terminal, where a line rewritten in
// place reads as progress instead of as noise.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// terminal is w if it is a terminal, for a progress line, or nil.
func terminal(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return w
	}
	return nil
}

// testEvent is the part of go test -json's events that progress reads.
type testEvent struct {
	Action string
	Test   string
	Output string
}

// followProgress reads go test -json's stream from r, writes the text of
// its output events to output (the plain output the command shows when the
// tests fail), and keeps one progress line up to date on w. A test whose
// name has depth slashes or more is a cell (TestScenarios/Race/correct,
// TestPostgres/rc/Race/correct). The totals that the matrix tests announce,
// one per matrix, add up to every cell: they are shown only when whole is
// set, for a run of whole matrices. PostgreSQL's levels run one after
// another and each announces its own total as it starts; they have the
// same cells, so until all of the run's matrices have spoken, each one
// still to come is counted as large as the last.
func followProgress(r io.Reader, output io.Writer, w io.Writer, whole bool, depth, matrices int) {
	total, done, announced, last := 0, 0, 0, 0
	started := false
	show := func(text string) { fmt.Fprintf(w, "\r\033[K%s", text) }
	show("compiling the scenario tests (a cold first run compiles SQLite: a minute or more)…")
	events(r, output, func(e testEvent) {
		if _, n, ok := strings.Cut(e.Output, report.CellsMarker); ok && whole {
			last, _ = strconv.Atoi(strings.TrimSpace(n))
			announced++
			total += last
		}
		switch {
		case e.Action == "run" && !started:
			started = true
			show("running the scenarios…")
		case (e.Action == "pass" || e.Action == "fail") && strings.Count(e.Test, "/") >= depth:
			done++
			if total > 0 {
				show(fmt.Sprintf("running the scenarios: %d of %d cells done", done, total+max(0, matrices-announced)*last))
			} else {
				show(fmt.Sprintf("running the scenarios: %d cells done", done))
			}
		}
	})
	fmt.Fprint(w, "\r\033[K")
}

// startJSON starts go test -json with args in root and returns it with
// its stream of events; go test's stderr, where build errors come, outside
// the stream, goes to stderr.
func startJSON(ctx context.Context, root string, args []string, stderr io.Writer) (*exec.Cmd, io.Reader, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json"}, args...)...)
	cmd.Dir = root
	cmd.Stderr = stderr
	stream, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	return cmd, stream, err
}

// events reads go test -json's stream from r, writes the text of its
// output events to output, and calls on with every event.
func events(r io.Reader, output io.Writer, on func(e testEvent)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e testEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(output, sc.Text()) // not an event: pass it on as it is
			continue
		}
		io.WriteString(output, e.Output)
		on(e)
	}
}
