package report

import (
	"strings"
	"testing"
)

// TestRenderTranscript lays lines out as the terminal shows them: a label
// before each session's line, results in one column after the widest
// text that has a result, a newline in a statement written \n, a remark a row per line of
// its own, and a result too long for its column on lines of its own.
func TestRenderTranscript(t *testing.T) {
	lines := []Line{
		{Session: "A", Text: "deliver provider-a/evt-1", Kind: KindNote},
		{Session: "A", Step: 1, Text: "BEGIN IMMEDIATE", Result: "-> ok", Kind: KindStatement},
		{Session: "B", Step: 1, Text: "BEGIN IMMEDIATE", Result: "<waiting>", Kind: KindWait},
		{Session: "A", Step: 2, Text: "SELECT 'a\nb'", Result: "-> 1 row", Kind: KindStatement},
		{Session: "A", Text: "answer", Result: "applied", Kind: KindNote},
		{Text: "rapid: the story\n  A1: SELECT 1", Kind: KindRemark},
	}
	want := "A: deliver provider-a/evt-1\n" +
		"A1: BEGIN IMMEDIATE  -> ok\n" +
		"B1: BEGIN IMMEDIATE  <waiting>\n" +
		`A2: SELECT 'a\nb'    -> 1 row` + "\n" +
		"A: answer            applied\n" +
		"rapid: the story\n" +
		"  A1: SELECT 1\n"
	if got := RenderTranscript(lines, TranscriptWidth); got != want {
		t.Errorf("RenderTranscript(…) =\n%s\nwant\n%s", got, want)
	}
	long := []Line{{Session: "B", Step: 3, Text: "INSERT INTO inbox (source, event_id, account_id, amount) VALUES ('provider-a', 'evt-3', 1, 500)",
		Result: "-> error: constraint failed: UNIQUE constraint failed: inbox.source, inbox.event_id (1555)", Kind: KindStatement}}
	want = "B3: INSERT INTO inbox (source, event_id, account_id,\n" +
		"    amount) VALUES ('provider-a', 'evt-3', 1, 500)\n" +
		"      -> error: constraint failed: UNIQUE constraint failed: inbox.source,\n" +
		"         inbox.event_id (1555)\n"
	if got := RenderTranscript(long, TranscriptWidth); got != want {
		t.Errorf("RenderTranscript(a long statement and error) =\n%s\nwant\n%s", got, want)
	}
	if _, n := WidestLine(RenderTranscript(long, TranscriptWidth)); n > TranscriptWidth {
		t.Errorf("RenderTranscript(…) has a line of %d runes, want at most %d", n, TranscriptWidth)
	}
	if got := RenderTranscript(nil, TranscriptWidth); got != "" {
		t.Errorf("RenderTranscript(nil) = %q, want \"\"", got)
	}
	if got := strings.Join([]string{lines[0].Label(), lines[1].Label(), lines[5].Label()}, ","); got != "A,A1," {
		t.Errorf("Label() of a note, a statement, a remark = %q, want %q", got, "A,A1,")
	}
}
