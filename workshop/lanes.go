package workshop

import (
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
	Raw     string // the line as the transcript prints it, unpadded
	Label   string // "A2", "A", or "" for a remark
	Session string
	Text    string
	Result  string
	Kind    string // the line's report.Line.Kind
	// Cells has one entry per session: what the row shows in that lane.
	Cells []LaneCell
}

// LaneCell is one session's part of a row.
type LaneCell struct {
	Here    bool // the row is this session's
	Waiting bool // this session is waiting for a lock meanwhile: drawn as a bar
}

// LanesOf draws a transcript's lines as swimlanes: a row per line, and a
// row per line of a remark of several (its kind on the first, the rest
// remarks); a newline in a session's line is written \n, as the terminal
// writes it.
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
	for _, l := range rowsOf(lines) {
		row := LaneRow{Raw: rawLine(l), Label: l.Label(), Session: l.Session, Text: l.Text, Result: l.Result, Kind: l.Kind}
		if l.Session != "" {
			if w, ok := waiting[l.Session]; ok && (l.Step != w || row.Kind != report.KindWait) {
				delete(waiting, l.Session) // the wait is over: this is its statement's result, or later
			}
		}
		for _, s := range lanes.Sessions {
			_, w := waiting[s]
			row.Cells = append(row.Cells, LaneCell{Here: s == l.Session, Waiting: w && s != l.Session})
		}
		if row.Kind == report.KindWait {
			waiting[l.Session] = l.Step
		}
		lanes.Rows = append(lanes.Rows, row)
	}
	return lanes
}

// rowsOf splits lines into the rows the lanes draw: a remark's lines each
// a row, but for empty ones; a session's line one row, its newlines
// written \n.
func rowsOf(lines []report.Line) []report.Line {
	var rows []report.Line
	for _, l := range lines {
		if l.Session != "" || l.Result != "" {
			l.Text, l.Result = oneLine(l.Text), oneLine(l.Result)
			rows = append(rows, l)
			continue
		}
		kind := l.Kind
		for _, s := range strings.Split(l.Text, "\n") {
			if s != "" {
				rows = append(rows, report.Line{Text: s, Kind: kind})
				kind = report.KindRemark
			}
		}
	}
	return rows
}

// oneLine writes s's newlines as \n.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }

// rawLine renders a line as the transcript does, without the padding.
func rawLine(l report.Line) string {
	s := l.Text
	if label := l.Label(); label != "" {
		s = label + ": " + s
	}
	if l.Result != "" {
		s += "  " + l.Result
	}
	return s
}
