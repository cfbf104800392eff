package lab

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Transcript is the story of one scenario run, one line per step, tagged by
// session, in the order the steps finished:
//
//	A: SELECT account_id, amount FROM inbox WHERE source = 'provider-a' AND event_id = 'evt-3'  -> no row
//	B: BEGIN IMMEDIATE                                                                         <waiting>
//
// It reads like a hermitage script: what each delivery did and what the
// database answered, so that a failure can be followed statement by statement.
type Transcript struct {
	mu    sync.Mutex
	lines []*line
}

type line struct {
	session string
	text    string
	op      Op
	result  *StmtResult // rendered when the transcript is printed: a query's rows are read after it is logged
	note    string      // shown instead of a result: "<waiting>", "applied", …
}

// Step logs a statement and its result.
func (t *Transcript) Step(s *Stmt, r *StmtResult) {
	t.add(&line{session: s.Session, text: s.Text(), op: s.Op, result: r})
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
	t.lines = append(t.lines, l)
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
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines[min(n, len(t.lines)):]
	width := 0
	for _, l := range lines {
		width = max(width, len(l.prefix())+len(l.text))
	}
	width = min(width, 100)
	var b strings.Builder
	for _, l := range lines {
		left := l.prefix() + l.text
		right := l.note
		if l.result != nil {
			right = "-> " + l.result.describe(l.op)
		}
		if right == "" {
			fmt.Fprintln(&b, left)
			continue
		}
		fmt.Fprintf(&b, "%-*s  %s\n", width, left, right)
	}
	return b.String()
}

func (l *line) prefix() string {
	if l.session == "" {
		return ""
	}
	return l.session + ": "
}

// reset forgets every line. It holds the lock like every other method: a
// goroutine of database/sql may still be logging a step.
func (t *Transcript) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = nil
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
