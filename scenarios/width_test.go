package scenarios_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/variants"
	"idemlab/workshop"
)

// fits says which line of a rendered transcript is wider than
// labtest.TranscriptWidth, counted in runes: the width that still fits 100
// columns inside go test's indentation and an exercise story's.
func fits(transcript string) error {
	if line, n := report.WidestLine(transcript); n > labtest.TranscriptWidth {
		return fmt.Errorf("a line of %d runes, want at most %d:\n%s", n, labtest.TranscriptWidth, line)
	}
	return nil
}

// unwrappedRace is naive/checkthenact × Race as transcripts were rendered
// before they were wrapped, results padded into one column 100 wide.
const unwrappedRace = `A1: SELECT account_id, amount FROM inbox WHERE source = 'provider-a' AND event_id = 'evt-3'           -> no row
A: answer                                                                                             applied
B3: INSERT INTO inbox (source, event_id, account_id, amount) VALUES ('provider-a', 'evt-3', 1, 500)   -> error: constraint failed: UNIQUE constraint failed: inbox.source, inbox.event_id (1555)
`

// TestGoldenTranscriptsFit holds every pinned transcript (TestScenarios
// compares each run with them) and the README's race to the width, and
// keeps the unwrapped rendering as the case the check must reject.
func TestGoldenTranscriptsFit(t *testing.T) {
	if fits(unwrappedRace) == nil {
		t.Errorf("fits(the unwrapped rendering) = nil, want an error")
	}
	if err := fits(strings.Repeat("✓", labtest.TranscriptWidth) + "\n"); err != nil {
		t.Errorf("fits(%d ✓) = %v, want nil: a width counts runes, not bytes", labtest.TranscriptWidth, err)
	}
	paths, err := filepath.Glob("testdata/transcripts/*/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden transcripts (%v)", err)
	}
	paths = append(paths, readmePath)
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if path == readmePath {
			_, text, _ = strings.Cut(text, readmeBlock{name: "race"}.begin())
			text, _, _ = strings.Cut(text, "```")
		}
		if err := fits(text); err != nil {
			t.Errorf("%s: %v\nrewrite it with: go test ./scenarios -update", path, err)
		}
	}
}

// TestTranscriptParses renders transcripts of real runs and requires the
// page's parser (workshop.ParseTranscript) to read back the lines the
// engine logged (labtest.Transcript.Lines), whatever wrapping moved: each
// line's session, step, text and result, up to whitespace. The parser the
// page had before transcripts were wrapped is kept as a case it must
// reject.
func TestTranscriptParses(t *testing.T) {
	for _, name := range []string{"Race", "ConflictRace", "LockTimeout", "PayloadConflict", "Rollback", "SchemaGuards"} {
		sc := scenarioNamed(t, name)
		for _, v := range variants.All {
			if v.Name != "correct" && v.Name != "naive/checkthenact" && v.Name != "naive/deferred" {
				continue
			}
			t.Run(name+"/"+v.Name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := labtest.NewRun(t, v)
					sc.Run(r)
					r.Close()
					text, want := r.Transcript.String(), r.Transcript.Lines()
					if err := fits(text); err != nil {
						t.Errorf("%s × %s: %v", v.Name, name, err)
					}
					if err := sameLines(workshop.ParseTranscript(text), want); err != nil {
						t.Errorf("ParseTranscript(%s × %s) %v\ntranscript:\n%s", v.Name, name, err, text)
					}
					if name == "Race" && v.Name == "naive/checkthenact" && sameLines(unwrappedParse(text), want) == nil {
						t.Errorf("the parser of unwrapped transcripts reads %s × %s back too: the check cannot fail", v.Name, name)
					}
				})
			})
		}
	}
}

// sameLines compares parsed lines with the logged ones, whitespace
// collapsed; a remark of several lines is one line a line. A word longer
// than a line is cut where the line ends, and comes back with a space in
// it: a line that has one is compared without whitespace.
func sameLines(got, logged []report.Line) error {
	var want []report.Line
	for _, l := range logged {
		if l.Session != "" {
			want = append(want, l)
			continue
		}
		for _, s := range strings.Split(l.Text, "\n") {
			if s != "" {
				want = append(want, report.Line{Text: s})
			}
		}
	}
	norm := func(l report.Line) report.Line {
		l.Text, l.Result = strings.Join(strings.Fields(l.Text), " "), strings.Join(strings.Fields(l.Result), " ")
		return l
	}
	for i := range max(len(got), len(want)) {
		var g, w report.Line
		if i < len(got) {
			g = norm(got[i])
		}
		if i < len(want) {
			w = norm(want[i])
		}
		if g != w && hasLongWord(w) {
			g.Text, g.Result = strings.ReplaceAll(g.Text, " ", ""), strings.ReplaceAll(g.Result, " ", "")
			w.Text, w.Result = strings.ReplaceAll(w.Text, " ", ""), strings.ReplaceAll(w.Result, " ", "")
		}
		if g != w {
			return fmt.Errorf("line %d = %+v, want %+v", i+1, g, w)
		}
	}
	return nil
}

// hasLongWord says whether l has a word the transcript cuts.
func hasLongWord(l report.Line) bool {
	for _, w := range strings.Fields(l.Text + " " + l.Result) {
		if utf8.RuneCountInString(w) > labtest.TranscriptWidth/2 {
			return true
		}
	}
	return false
}

// unwrappedParse is the page's parser from before transcripts were
// wrapped: a line per transcript line, split at its first gap.
func unwrappedParse(text string) []report.Line {
	prefix := regexp.MustCompile(`^([A-Z]{1,2}|other)(\d*): `)
	var out []report.Line
	for _, raw := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if raw == "" {
			continue
		}
		m := prefix.FindStringSubmatch(raw)
		if m == nil {
			out = append(out, report.Line{Text: raw})
			continue
		}
		l := report.Line{Session: m[1]}
		for _, c := range m[2] {
			l.Step = l.Step*10 + int(c-'0')
		}
		rest := raw[len(m[0]):]
		if loc := regexp.MustCompile(`\s{2,}`).FindStringIndex(rest); loc != nil {
			l.Text, l.Result = rest[:loc[0]], rest[loc[1]:]
		} else {
			l.Text = rest
		}
		out = append(out, l)
	}
	return out
}
