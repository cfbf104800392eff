package labtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Transcript is the story of one scenario run, one line per step, tagged by
// session, in the order the steps finished, rendered to fit TranscriptWidth:
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

// Step logs a statement and its result.
func (t *Transcript) Step(s *stmt, r *stmtResult) {
	t.add(&line{session: s.Session, step: s.N, text: s.Text(), op: s.Op, result: r})
}

// StepNote logs a statement with a note instead of a result: "<waiting>",
// "<killed before it ran>".
func (t *Transcript) StepNote(s *stmt, note string) {
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
	t.mu.Lock()
	defer t.mu.Unlock()
	var rows []textRow
	for _, l := range t.lines[min(n, len(t.lines)):] {
		rows = append(rows, l.rows()...)
	}
	return layout(rows, TranscriptWidth)
}

// rows is how a line is laid out: a statement or a session's note is one
// row, its text on the left and its result or note on the right; a remark
// is a row per line of its own, with nothing on the right.
func (l *line) rows() []textRow {
	if l.session == "" && l.note == "" && l.result == nil {
		var rows []textRow
		for _, s := range strings.Split(l.text, "\n") {
			s = escapeControls(s)
			rows = append(rows, textRow{left: s, indent: len(s) - len(strings.TrimLeft(s, " ")) + 4})
		}
		return rows
	}
	right := l.note
	if l.result != nil {
		right = "-> " + l.result.describe(l.op)
	}
	prefix := l.prefix()
	return []textRow{{left: prefix + escapeAll(l.text), right: escapeAll(right), indent: utf8.RuneCountInString(prefix), session: true}}
}

// TranscriptWidth is the widest line, in runes, of a rendered transcript:
// 78, so that it fits 100 columns even inside go test's indentation of a
// failure in the deepest cell the lab reports, TestPostgres/<level>/
// <scenario>/<variant> (20 spaces), and the 2 the failure's own text adds.
const TranscriptWidth = 78

// minRight is the narrowest the result column gets: "-> 1 row", "<waiting>"
// and "holds the write lock" fit it whole.
const minRight = 24

// A textRow is a line of a transcript before it is laid out in width columns.
type textRow struct {
	left, right string
	indent      int  // how far the left's continuation lines are indented
	session     bool // a session's line: its right, if any, goes in the result column
}

// layout renders rows in width columns, each result in a column of its own
// on its statement's last line:
//
//	A1: SELECT account_id, amount FROM inbox WHERE source =
//	    'provider-a' AND event_id = 'evt-3'                           -> no row
//	B3: INSERT INTO inbox (source, event_id, account_id, amount)
//	    VALUES ('provider-a', 'evt-3', 1, 500)
//	      -> error: constraint failed: UNIQUE constraint failed: inbox.source, inbox.event_id
//	         (1555)
//
// A session's text too long for its column wraps at spaces onto lines
// indented under the statement, by its prefix's width ("A1: "); a result
// too long for the result column goes on lines of its own under the
// statement, indented two further. The result column is as far right as
// the widest statement, but leaves minRight for the result. A remark has
// the whole width and wraps with a hanging indent.
//
// The page parses this back (workshop.ParseTranscript): a line indented by
// exactly its statement's prefix width continues the statement's text, one
// indented further continues its result.
func layout(rows []textRow, width int) string {
	widest := 0
	for _, r := range rows {
		if r.session && r.right != "" {
			widest = max(widest, utf8.RuneCountInString(r.left))
		}
	}
	best := min(widest, width-2-minRight)
	var b strings.Builder
	for _, r := range rows {
		for _, l := range r.lines(best, width) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// lines lays r out with its result in the column after col.
func (r textRow) lines(col, width int) []string {
	if !r.session || r.right == "" {
		left := wrapWords(r.left, width, r.indent)
		return left
	}
	left := wrapWords(r.left, col, r.indent)
	if utf8.RuneCountInString(r.right) <= width-col-2 {
		// The result on the statement's last line, in its column.
		last := len(left) - 1
		left[last] = pad(left[last], col) + "  " + r.right
		return left
	}
	// A result too long for its column: on lines of its own under the
	// statement, indented further than its text.
	indent := min(r.indent, width/2) + 2
	hang := 0
	if strings.HasPrefix(r.right, "-> ") {
		hang = 3
	}
	for _, l := range wrapWords(r.right, width-indent, hang) {
		left = append(left, strings.Repeat(" ", indent)+l)
	}
	return left
}

// pad fills s with spaces to n runes.
func pad(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}

// wrapWords breaks s at spaces into lines of at most width runes, every
// line after the first indented by indent spaces. A line that fits is kept
// as it is; a word longer than a line is cut.
func wrapWords(s string, width, indent int) []string {
	if utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	lead := len(s) - len(strings.TrimLeft(s, " "))
	indent = min(indent, width/2)
	var out []string
	line, n := s[:lead], lead
	fresh := true // the line has no word yet
	flush := func() {
		out = append(out, line)
		line, n, fresh = strings.Repeat(" ", indent), indent, true
	}
	for _, w := range strings.Fields(s) {
		wn := utf8.RuneCountInString(w)
		if !fresh && n+1+wn > width {
			flush()
		}
		if !fresh {
			line += " "
			n++
		}
		for n+wn > width { // a word longer than what is left of the line
			cut := width - n
			if cut <= 0 {
				flush()
				continue
			}
			line += string([]rune(w)[:cut])
			w = string([]rune(w)[cut:])
			wn -= cut
			flush()
		}
		line += w
		n += wn
		fresh = false
	}
	if !fresh || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// prefix tags a line with its session, and a statement with its step too,
// "A2: ", so that a schedule such as "A1 B1 A2" reads off the transcript.
func (l *line) prefix() string {
	switch {
	case l.session == "":
		return ""
	case l.step > 0:
		return fmt.Sprintf("%s%d: ", l.session, l.step)
	}
	return l.session + ": "
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

// escapeAll is escapeControls for a line's own text, where a newline too is
// escaped: it would break the line's layout.
func escapeAll(s string) string {
	return strings.ReplaceAll(escapeControls(s), "\n", `\n`)
}

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
