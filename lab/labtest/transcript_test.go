package labtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"idemlab/lab/report"
)

func TestTranscriptRendering(t *testing.T) {
	var tr Transcript
	tr.Note("A", "deliver provider-a/evt\x00-1\x1b[31m", "")
	tr.step(&stmt{Session: "A", N: 1, Op: OpBegin, SQL: "BEGIN IMMEDIATE"}, &stmtResult{Rows: -1})
	tr.step(&stmt{Session: "A", N: 2, Op: OpUpdate, SQL: "UPDATE accounts SET balance = 1"},
		&stmtResult{Rows: -1, NotRun: true, Err: errors.New("injected fault before statement 2")})
	tr.step(&stmt{Session: "B", N: 3, Op: OpUpdate, SQL: "UPDATE accounts SET balance = 2"},
		&stmtResult{Rows: -1, Err: errors.New("disk I/O error")})
	got := tr.String()
	for _, want := range []string{
		`A: deliver provider-a/evt\x00-1\x1b[31m` + "\n",
		"A1: BEGIN IMMEDIATE",
		"A2: UPDATE accounts SET balance = 1\n      -> not run: injected fault before statement 2\n",
		"B3: UPDATE accounts SET balance = 2  -> error: disk I/O error\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Transcript.String() = %q, want it to contain %q", got, want)
		}
	}
	if strings.ContainsRune(got, 0) || strings.ContainsRune(got, 0x1b) {
		t.Errorf("Transcript.String() = %q, want no raw control bytes", got)
	}
}

// raceTranscript is naive/checkthenact × Race's story, with the lines that
// made transcripts 200 columns wide: long statements, a long error as a
// result and as a note, long remarks, a remark of several lines, and an
// event id longer than a line.
func raceTranscript() *Transcript {
	var tr Transcript
	sel := "SELECT account_id, amount FROM inbox WHERE source = 'provider-a' AND event_id = 'evt-3'"
	ins := "INSERT INTO inbox (source, event_id, account_id, amount) VALUES ('provider-a', 'evt-3', 1, 500)"
	unique := errors.New("constraint failed: UNIQUE constraint failed: inbox.source, inbox.event_id (1555)")
	tr.Note("", "18 of 20 interleavings break a guarantee; the shortest:", "")
	tr.Note("A", "deliver provider-a/evt-3 account=1 amount=500 ✓", "")
	tr.step(&stmt{Session: "A", N: 1, Op: OpSelect, SQL: sel}, &stmtResult{})
	tr.stepNote(&stmt{Session: "B", N: 1, Op: OpSelect, SQL: sel}, "<waiting>")
	tr.step(&stmt{Session: "A", N: 2, Op: OpUpdate, SQL: "UPDATE accounts SET balance = balance + 500 WHERE id = 1"},
		&stmtResult{Rows: -1, RowsAffected: 1})
	tr.step(&stmt{Session: "A", N: 3, Op: OpInsert, SQL: ins}, &stmtResult{Rows: -1, RowsAffected: 1})
	tr.Note("A", "answer", "applied")
	tr.step(&stmt{Session: "B", N: 3, Op: OpInsert, SQL: ins}, &stmtResult{Rows: -1, Err: unique})
	tr.Note("B", "answer", "error (other error): "+unique.Error())
	tr.step(&stmt{Session: "C", N: 1, Op: OpSelect, SQL: "SELECT 1 WHERE event_id = '" + strings.Repeat("é", 150) + "'"}, &stmtResult{})
	tr.Note("", "schedule: A1 B1 A2 A3 B3", "")
	tr.Note("", "FAIL: 2 deliveries = 1 applied, 0 duplicate, 1 error, want 1, 1, 0 (first error: B: error (other error): "+unique.Error()+")", "")
	tr.Note("", "rapid: the story\n   A1: "+sel+"  -> no row\n", "")
	return &tr
}

// unwrappedFrom is the renderer transcripts had before they were wrapped:
// the text padded to the widest line's width (at most 100), then the
// result. It is kept as the wrong rendering TestTranscriptFits must reject.
func unwrappedFrom(t *Transcript) string {
	prefix := func(l *line) string {
		switch {
		case l.session == "":
			return ""
		case l.step > 0:
			return fmt.Sprintf("%s%d: ", l.session, l.step)
		}
		return l.session + ": "
	}
	width := 0
	for _, l := range t.lines {
		width = max(width, len(prefix(l))+len(l.text))
	}
	width = min(width, 100)
	var b strings.Builder
	for _, l := range t.lines {
		left, right := prefix(l)+l.text, l.note
		if l.result != nil {
			right = "-> " + l.result.describe(l.op)
		}
		if right == "" {
			b.WriteString(left + "\n")
			continue
		}
		fmt.Fprintf(&b, "%-*s  %s\n", width, left, right)
	}
	return escapeControls(b.String())
}

// TestTranscriptFits requires every line of a rendered transcript to fit
// report.TranscriptWidth, counted in runes, and every word of the unwrapped
// rendering to be in it, in order: wrapping moves words, it loses none.
func TestTranscriptFits(t *testing.T) {
	tr := raceTranscript()
	got := tr.String()
	if line, n := report.WidestLine(got); n > report.TranscriptWidth {
		t.Errorf("Transcript.String() has a line of %d runes, want at most %d:\n%s\nwhole:\n%s", n, report.TranscriptWidth, line, got)
	}
	if _, n := report.WidestLine(unwrappedFrom(tr)); n <= report.TranscriptWidth {
		t.Errorf("the unwrapped rendering's widest line = %d runes, want over %d: the check would pass it", n, report.TranscriptWidth)
	}
	// A word longer than a line is cut: compare without whitespace.
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if want := squeeze(unwrappedFrom(tr)); squeeze(got) != want {
		t.Errorf("Transcript.String() =\n%s\nwant the words of\n%s", got, unwrappedFrom(tr))
	}
	for _, want := range []string{
		"A1: SELECT account_id, amount FROM inbox WHERE\n    source = 'provider-a' AND event_id = 'evt-3' ",
		"A3: INSERT INTO inbox (source, event_id, account_id,\n    amount) VALUES ('provider-a', 'evt-3', 1, 500)",
		"\n      -> error: constraint failed: UNIQUE",
		"A2: UPDATE accounts SET balance = balance + 500\n    WHERE id = 1                                      -> 1 row\n",
		"\nFAIL: 2 deliveries = 1 applied, 0 duplicate, 1 error, want 1, 1, 0 (first\n    error:",
		"\n   A1: SELECT",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Transcript.String() =\n%s\nwant it to contain %q", got, want)
		}
	}
}

// TestTranscriptShortLines keeps a transcript whose lines fit as it was:
// text, then the result in a column after the widest text.
func TestTranscriptShortLines(t *testing.T) {
	var tr Transcript
	tr.Note("A", "deliver provider-a/evt-1", "")
	tr.step(&stmt{Session: "A", N: 1, Op: OpBegin, SQL: "BEGIN IMMEDIATE"}, &stmtResult{Rows: -1})
	tr.stepNote(&stmt{Session: "B", N: 1, Op: OpBegin, SQL: "BEGIN IMMEDIATE"}, "<waiting>")
	tr.Note("A", "answer", "applied")
	want := "A: deliver provider-a/evt-1\n" +
		"A1: BEGIN IMMEDIATE  -> ok\n" +
		"B1: BEGIN IMMEDIATE  <waiting>\n" +
		"A: answer            applied\n"
	if got := tr.String(); got != want {
		t.Errorf("Transcript.String() = %q, want %q", got, want)
	}
}
