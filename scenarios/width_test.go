package scenarios_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// fits says which line of a rendered transcript is wider than
// report.TranscriptWidth, counted in runes: the width that still fits 100
// columns inside go test's indentation and an exercise story's.
func fits(transcript string) error {
	if line, n := report.WidestLine(transcript); n > report.TranscriptWidth {
		return fmt.Errorf("a line of %d runes, want at most %d:\n%s", n, report.TranscriptWidth, line)
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
	if err := fits(strings.Repeat("✓", report.TranscriptWidth) + "\n"); err != nil {
		t.Errorf("fits(%d ✓) = %v, want nil: a width counts runes, not bytes", report.TranscriptWidth, err)
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

// TestTranscriptsFit renders the transcripts of real runs, with their long
// statements, errors and stories, and holds every line to
// report.TranscriptWidth, and the text to every word of the lines the
// engine logged, in order: wrapping moves words and cuts a word longer than
// a line, it loses none.
func TestTranscriptsFit(t *testing.T) {
	for _, name := range []string{"Race", "ConflictRace", "LockTimeout", "PayloadConflict", "Rollback", "SchemaGuards"} {
		sc := scenarios.Named(scenarios.All, name)
		for _, v := range variants.All {
			if v.Name != "correct" && v.Name != "naive/checkthenact" && v.Name != "naive/deferred" {
				continue
			}
			t.Run(name+"/"+v.Name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := labtest.NewRun(t, v)
					sc.Run(r)
					r.Close()
					lines := r.Transcript.Lines()
					text := report.RenderTranscript(lines, report.TranscriptWidth)
					if err := fits(text); err != nil {
						t.Errorf("%s × %s: %v", v.Name, name, err)
					}
					var words strings.Builder
					for _, l := range lines {
						if l.Label() != "" {
							words.WriteString(l.Label() + ":")
						}
						words.WriteString(l.Text + l.Result)
					}
					squeeze := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, `\n`, "")), "") }
					if got, want := squeeze(text), squeeze(strings.ReplaceAll(words.String(), "\n", "")); got != want {
						t.Errorf("RenderTranscript(%s × %s) lost or moved words:\n%s", v.Name, name, text)
					}
				})
			})
		}
	}
}
