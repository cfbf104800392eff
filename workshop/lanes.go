package workshop

import (
	"regexp"
	"strings"

	"idemlab/lab/report"
)

// Lanes is a transcript drawn as swimlanes: one column per session (A, B,
// …, and "other" for a connection the lab holds), one row per line. A row
// whose session is "" spans every column: the lab's own remarks, such as
// the schedule or a broken guarantee.
type Lanes struct {
	Sessions []string
	Rows     []LaneRow
}

// LaneRow is one line of a transcript.
type LaneRow struct {
	Raw     string // the line as the transcript prints it
	Label   string // "A2", "A", or "" for a remark
	Session string
	Text    string
	Result  string
	Kind    string // "stmt", "note", "wait", "fault", "fail", "remark"
	// Cells has one entry per session: what the row shows in that lane.
	Cells []LaneCell
}

// LaneCell is one session's part of a row.
type LaneCell struct {
	Here    bool // the row is this session's
	Waiting bool // this session is waiting for a lock meanwhile: drawn as a bar
}

// linePrefix matches a transcript line's session tag, "A2: " or "B: ";
// sessions are named with at most two letters (64 sessions is the most a
// scenario runs), which keeps "FAIL: " a remark.
var linePrefix = regexp.MustCompile(`^([A-Z]{1,2}|other)(\d*): `)

// resultGap separates a line's text from its result: the transcript pads
// the text with spaces, at least two, and SQL has its whitespace collapsed.
var resultGap = regexp.MustCompile(`\s{2,}`)

// ParseTranscript reads a transcript as rendered by the engine (the text
// go run ./cmd/lab explain prints) into lines. The engine wraps a line too
// long for its width (labtest.TranscriptWidth): a statement's text goes on
// under it, indented by its tag's width ("A1: "), and its result, when too
// long for the result column, on lines indented further; a remark goes on
// under a hanging indent of 4. Each continuation is joined back to its
// line with a space, which is where the engine broke it.
func ParseTranscript(text string) []report.Line {
	var out []report.Line
	// open is the line continuation lines extend: its index in out, the
	// indentation of its text's continuations, and whether it is a
	// session's line (whose continuations may carry its result).
	open, indent, session := -1, 0, false
	for _, raw := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if raw == "" {
			open = -1
			continue
		}
		rest := strings.TrimLeft(raw, " ")
		k := len(raw) - len(rest)
		if k > 0 && open >= 0 {
			l := &out[open]
			switch {
			case session && k == indent && l.Result == "":
				more, result := splitResult(rest)
				l.Text += " " + more
				l.Result = result
				continue
			case session && k > indent:
				l.Result = strings.TrimSpace(l.Result + " " + rest)
				continue
			case !session && k == indent:
				l.Text += " " + rest
				continue
			}
		}
		m := linePrefix.FindStringSubmatch(raw)
		if m == nil {
			out = append(out, report.Line{Text: raw})
			open, indent, session = len(out)-1, k+4, false
			continue
		}
		l := report.Line{Session: m[1]}
		if m[2] != "" {
			for _, c := range m[2] {
				l.Step = l.Step*10 + int(c-'0')
			}
		}
		l.Text, l.Result = splitResult(raw[len(m[0]):])
		out = append(out, l)
		open, indent, session = len(out)-1, len(m[0]), true
	}
	return out
}

// splitResult cuts a line's text from the result padded after it.
func splitResult(s string) (text, result string) {
	if loc := resultGap.FindStringIndex(s); loc != nil {
		return s[:loc[0]], s[loc[1]:]
	}
	return s, ""
}

// LanesOf draws lines as swimlanes.
func LanesOf(lines []report.Line) Lanes {
	var lanes Lanes
	seen := map[string]bool{}
	for _, l := range lines {
		if l.Session != "" && !seen[l.Session] {
			seen[l.Session] = true
			lanes.Sessions = append(lanes.Sessions, l.Session)
		}
	}
	waiting := map[string]int{} // session → the step it waits in
	for _, l := range lines {
		row := LaneRow{Raw: rawLine(l), Session: l.Session, Text: l.Text, Result: l.Result, Kind: kindOf(l)}
		switch {
		case l.Session == "":
		case l.Step > 0:
			row.Label = l.Session + itoa(l.Step)
		default:
			row.Label = l.Session
		}
		if l.Session != "" {
			if w, ok := waiting[l.Session]; ok && (l.Step != w || row.Kind != "wait") {
				delete(waiting, l.Session) // the wait is over: this is its statement's result, or later
			}
		}
		for _, s := range lanes.Sessions {
			_, w := waiting[s]
			row.Cells = append(row.Cells, LaneCell{Here: s == l.Session, Waiting: w && s != l.Session})
		}
		if row.Kind == "wait" {
			waiting[l.Session] = l.Step
		}
		lanes.Rows = append(lanes.Rows, row)
	}
	return lanes
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// rawLine renders a line as the transcript does, without the padding.
func rawLine(l report.Line) string {
	s := l.Text
	switch {
	case l.Session != "" && l.Step > 0:
		s = l.Session + itoa(l.Step) + ": " + s
	case l.Session != "":
		s = l.Session + ": " + s
	}
	if l.Result != "" {
		s += "  " + l.Result
	}
	return s
}

// kindOf classifies a line for drawing: a wait, an injected fault or a
// crash, a broken guarantee, a statement, a session's note, a remark.
func kindOf(l report.Line) string {
	switch {
	case l.Result == "<waiting>":
		return "wait"
	case strings.Contains(l.Result, "injected") || strings.Contains(l.Result, "killed") ||
		strings.Contains(l.Text, "the process was killed") || strings.HasPrefix(l.Result, "<cancel"):
		return "fault"
	case strings.HasPrefix(l.Text, "FAIL: "):
		return "fail"
	case l.Session == "":
		return "remark"
	case l.Step > 0:
		return "stmt"
	}
	return "note"
}
