package report

import (
	"slices"
	"strings"
)

// FailuresInPlace returns c's transcript with its broken guarantees where
// they broke, each once, and the failures the transcript does not show:
// what explain prints and the page draws as swimlanes.
//
// The transcript tells every broken guarantee of the run it shows as a
// FAIL line where it broke; the cell's Failures list them again, with the
// file:line that found them, and for a sweep of cases or of interleavings
// with the case ("WAL, full disk: …") or the tally ("18 of 20 interleavings
// break it; the shortest, …: balance …") before the quoted failure. So a
// FAIL line takes the failure it quotes, with its file:line; a tally that
// quotes a failure told above it leaves the quote out; and a failure of a
// run the transcript does not show is listed after it.
func (c *Cell) FailuresInPlace() (lines []Line, rest []string) {
	failures := slices.Clone(c.Failures)
	if !c.Pass && len(failures) == 0 {
		failures = []string{c.Detail}
	}
	where := func(i int) string {
		if i < len(c.Where) && c.Where[i] != "" {
			return c.Where[i] + ": "
		}
		return ""
	}
	lines = slices.Clone(c.Lines)
	used := make([]bool, len(failures))
	var fails []int // the FAIL lines, in order
	for i, l := range lines {
		if l.Kind == KindFail && strings.HasPrefix(l.Text, "FAIL: ") {
			fails = append(fails, i)
		}
	}
	text := func(i int) string { return strings.TrimPrefix(c.Lines[i].Text, "FAIL: ") }
	claim := func(i int, match func(f string) bool) {
		for j, f := range failures {
			if !used[j] && match(f) {
				used[j] = true
				lines[i].Text = "FAIL: " + where(j) + f
				return
			}
		}
	}
	// The failure a line quotes whole first, then one that quotes it after
	// its case.
	for _, i := range fails {
		claim(i, func(f string) bool { return f == text(i) })
	}
	for _, i := range fails {
		if lines[i].Text == c.Lines[i].Text {
			claim(i, func(f string) bool { return strings.HasSuffix(f, ": "+text(i)) })
		}
	}
	for k, i := range fails {
		for _, e := range fails[:k] {
			if quoted := ": " + text(e); strings.HasSuffix(lines[i].Text, quoted) {
				lines[i].Text = strings.TrimSuffix(lines[i].Text, quoted)
				break
			}
		}
	}
	for j, f := range failures {
		if !used[j] {
			rest = append(rest, where(j)+f)
		}
	}
	return lines, rest
}

// TranscriptInPlace is the transcript as explain prints it under
// "transcript:", and as the README shows it: c's lines with the failures
// in place (FailuresInPlace), rendered TranscriptWidth wide, or "(empty)",
// then the failures of runs the transcript does not show.
func (c *Cell) TranscriptInPlace() string {
	lines, rest := c.FailuresInPlace()
	var b strings.Builder
	if transcript := RenderTranscript(lines, TranscriptWidth); transcript == "" {
		b.WriteString("(empty)\n")
	} else {
		b.WriteString(transcript)
	}
	if len(rest) > 0 {
		if len(lines) > 0 {
			b.WriteString("broken too, in runs the transcript does not show:\n")
		} else {
			b.WriteString("failures:\n")
		}
		for _, f := range rest {
			b.WriteString(Wrap("  "+f, 6))
		}
	}
	return b.String()
}
