package labtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"idemlab/lab/report"
)

// Transcript is the story of one scenario run, one line per step, tagged by
// session, in the order the steps finished. The engine keeps it as lines
// (Lines); String renders them (report.RenderTranscript) to fit
// report.TranscriptWidth:
//
//	A1: SELECT account_id, amount FROM inbox WHERE source =
//	    'provider-a' AND event_id = 'evt-3'                           -> no row
//	B1: BEGIN IMMEDIATE                                               <waiting>
//
// It reads like a hermitage script: what each delivery did and what the
// database answered, so that a failure can be followed statement by statement.
type Transcript struct {
	mu     sync.Mutex
	lines  []*line
	silent map[string]bool // sessions whose lines are no longer kept (silence)
}

type line struct {
	session string
	step    int // the statement's number in its session (A1, A2, …); 0 for a note
	text    string
	op      Op
	result  *stmtResult // rendered when the transcript is printed: a query's rows are read after it is logged
	note    string      // shown instead of a result: "<waiting>", "applied", …
}

// step logs a statement and its result.
func (t *Transcript) step(s *stmt, r *stmtResult) {
	t.add(&line{session: s.Session, step: s.N, text: s.Text(), op: s.Op, result: r})
}

// stepNote logs a statement with a note instead of a result: "<waiting>",
// "<killed before it ran>".
func (t *Transcript) stepNote(s *stmt, note string) {
	t.add(&line{session: s.Session, step: s.N, text: s.Text(), op: s.Op, note: note})
}

// Note logs a line with no SQL of its own: a delivery starting or answering,
// a session waiting for a lock, an injected fault, a check that failed.
// session may be "" for the lab's own remarks.
func (t *Transcript) Note(session, text, note string) {
	t.add(&line{session: session, text: text, note: note})
}

func (t *Transcript) add(l *line) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.silent[l.session] {
		return
	}
	t.lines = append(t.lines, l)
}

// silence drops every later line of session: a delivery killed by a crash
// fault is a process that is gone, and nothing it would still do is seen.
func (t *Transcript) silence(session string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.silent == nil {
		t.silent = map[string]bool{}
	}
	t.silent[session] = true
}

// Len returns the number of lines logged so far.
func (t *Transcript) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.lines)
}

// String renders the transcript with the results in one column.
func (t *Transcript) String() string { return t.From(0) }

// From renders the lines from the n-th on (see Len), for a story that
// wants only the part of a run that one step wrote.
func (t *Transcript) From(n int) string {
	lines := t.Lines()
	return report.RenderTranscript(lines[min(n, len(lines)):], report.TranscriptWidth)
}

// Lines returns the transcript as it is now, a report.Line per line: a
// statement's session and step ("B", 2), its text with the arguments in
// place, its result ("-> 1 row", "-> error: …") or note ("<waiting>"),
// control characters written as Go escapes, and its kind (kindOf). A
// statement that waited has two lines, the "<waiting>" one and the one
// with its result.
func (t *Transcript) Lines() []report.Line {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]report.Line, len(t.lines))
	for i, l := range t.lines {
		right := l.note
		if l.result != nil {
			right = "-> " + l.result.describe(l.op)
		}
		out[i] = report.Line{Session: l.session, Step: l.step, Text: escapeControls(l.text), Result: escapeControls(right)}
		out[i].Kind = kindOf(out[i])
	}
	return out
}

// kindOf tells what l is by what the lab writes for each kind: a wait's
// note, an injected fault's error, a killed process's notes and remark, a
// cancelled caller's note, a broken guarantee's remark; else a remark of
// the lab, a statement, or a session's note.
func kindOf(l report.Line) string {
	switch {
	case l.Result == "<waiting>":
		return report.KindWait
	case strings.Contains(l.Result, "injected") || strings.Contains(l.Result, "killed") ||
		strings.Contains(l.Text, "the process was killed") || strings.HasPrefix(l.Result, "<cancel"):
		return report.KindFault
	case strings.HasPrefix(l.Text, "FAIL: "):
		return report.KindFail
	case l.Session == "":
		return report.KindRemark
	case l.Step > 0:
		return report.KindStatement
	}
	return report.KindNote
}

// escapeControls writes every control character but the newline as a Go
// escape (\x00, \t), so that an event id holding a NUL or an escape sequence
// shows as what it is, and the transcript stays text.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, isEscaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isEscaped(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isEscaped(r rune) bool { return r != '\n' && unicode.IsControl(r) }

// reset forgets every line. It holds the lock like every other method: a
// goroutine of database/sql may still be logging a step.
func (t *Transcript) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines, t.silent = nil, nil
}

// include appends the lines of u, as they are now.
func (t *Transcript) include(u *Transcript) {
	u.mu.Lock()
	lines := slices.Clone(u.lines)
	u.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, lines...)
}

// waits returns the steps that waited for a lock, in the order they began
// to wait: "B1", "A3".
func (t *Transcript) waits() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var steps []string
	for _, l := range t.lines {
		if l.note == "<waiting>" {
			steps = append(steps, fmt.Sprintf("%s%d", l.session, l.step))
		}
	}
	return steps
}
