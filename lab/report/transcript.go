package report

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line is one line of a transcript: a statement a session ran and what the
// database answered, a session's note (a delivery starting or answering, a
// fault), or the lab's own remark (the schedule, a broken guarantee). The
// engine logs them (labtest.Transcript.Lines); the terminal, the golden
// files and a failure's message render them as text (RenderTranscript),
// the page as swimlanes.
type Line struct {
	// Session is "" for the lab's own remarks (the schedule, a FAIL).
	Session string `json:"session,omitempty"`
	// Step is the statement's number in its session, 0 for a note.
	Step int `json:"step,omitempty"`
	// Text is the statement with its arguments in place, or the note
	// ("deliver …", "answer"), control characters but the newline
	// written as Go escapes. A remark may be several lines.
	Text string `json:"text"`
	// Result is what the database answered ("-> 1 row"), or a note in
	// its place ("<waiting>", "applied"); "" for a remark.
	Result string `json:"result,omitempty"`
	// Kind says what the line is, for drawing it: KindStatement,
	// KindNote, KindWait, KindFault, KindFail or KindRemark.
	Kind string `json:"kind"`
}

// The kinds of a transcript line (Line.Kind).
const (
	KindStatement = "stmt"   // a statement and the database's answer
	KindNote      = "note"   // a session's note: a delivery starts, answers
	KindWait      = "wait"   // a statement that waits for a lock another session holds
	KindFault     = "fault"  // a fault the lab injected, a process it killed, a caller that cancels
	KindFail      = "fail"   // the lab's remark that a guarantee broke ("FAIL: …")
	KindRemark    = "remark" // the lab's other remarks: the schedule, a story
)

// Label names the line's statement as a schedule does, "A2"; a session's
// note by its session, "A"; and a remark "".
func (l Line) Label() string {
	switch {
	case l.Session == "":
		return ""
	case l.Step > 0:
		return l.Session + strconv.Itoa(l.Step)
	}
	return l.Session
}

// RenderTranscript renders lines as the text the terminal, the golden files
// and a failure's message show, width columns wide (TranscriptWidth):
// every line tagged by its Label, so that a schedule such as "A1 B1 A2"
// reads off it, and every result in a column of its own (see layout).
func RenderTranscript(lines []Line, width int) string {
	var rows []textRow
	for _, l := range lines {
		rows = append(rows, l.rows()...)
	}
	return layout(rows, width)
}

// rows is how a line is laid out: a statement or a session's note is one
// row, its label and text on the left and its result on the right, a
// newline in either written as \n; a remark is a row per line of its own,
// with nothing on the right.
func (l Line) rows() []textRow {
	if l.Session == "" && l.Result == "" {
		var rows []textRow
		for _, s := range strings.Split(l.Text, "\n") {
			rows = append(rows, textRow{left: s, indent: len(s) - len(strings.TrimLeft(s, " ")) + 4})
		}
		return rows
	}
	prefix := ""
	if label := l.Label(); label != "" {
		prefix = label + ": "
	}
	return []textRow{{left: prefix + oneLine(l.Text), right: oneLine(l.Result), indent: utf8.RuneCountInString(prefix), session: true}}
}

// oneLine writes s's newlines as \n, which would break a line's layout.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }

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
		return WrapWords(r.left, width, r.indent)
	}
	left := WrapWords(r.left, col, r.indent)
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
	for _, l := range WrapWords(r.right, width-indent, hang) {
		left = append(left, strings.Repeat(" ", indent)+l)
	}
	return left
}
