package exercises

import (
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/variants"
)

// raceFailure is naive/checkthenact's failure of Race, from a real run: the
// story with the widest lines before transcripts were wrapped.
func raceFailure(t *testing.T) Failure {
	sc, ok := MatrixScenario("Race")
	if !ok {
		t.Fatal("no scenario Race")
	}
	for _, v := range variants.All {
		if v.Name == "naive/checkthenact" {
			return FailureOf(sc, labtest.RunCell(t, sc, v))
		}
	}
	t.Fatal("no variant naive/checkthenact")
	return Failure{}
}

// TestRenderFits holds every line of a story to StoryWidth, so that it
// fits report.Width inside go test's indentation, and requires a failure
// the transcript notes, wrapped over several lines, not to be listed again.
func TestRenderFits(t *testing.T) {
	race := raceFailure(t)
	long := Failure{
		Guarantee: "SchemaGuards",
		Shows:     "rows only the schema can refuse (over the cap, fractional, empty, NULL, oversized, no such account): refused with their kind",
		Lines: []string{"A: Process(provider-a/evt-guard account=2 amount=500) = error (invalid event): invalid event: " +
			"refused by the schema: constraint failed: CHECK constraint failed: amount BETWEEN 1 AND 1000000000 (275), " +
			"but the database changed: account 2 balance 0 -> 500"},
	}
	for _, show := range []string{"", "SchemaGuards"} {
		got := Render("exercises/checkthenact", []Failure{race, long}, show)
		if line, n := report.WidestLine(got); n > StoryWidth {
			t.Errorf("Render(…, %q) has a line of %d runes, want at most %d:\n%s\nwhole:\n%s", show, n, StoryWidth, line, got)
		}
	}
	got := Render("exercises/checkthenact", []Failure{race}, "")
	_, full, _ := strings.Cut(got, "Race, in full:\n")
	if !strings.HasPrefix(full, "transcript:\n") {
		t.Errorf("Render(race) lists failures the transcript notes again:\n%s", got)
	}
	if !strings.Contains(race.Transcript, "FAIL: 2 deliveries = 1 applied, 0 duplicate, 1 error, want 1, 1, 0 (first\n") {
		t.Errorf("Race's transcript no longer wraps a FAIL line: the check above no longer tests failNotes:\n%s", race.Transcript)
	}
}

func TestFailNotes(t *testing.T) {
	notes := failNotes("A: x\nFAIL: one two\n    three\nFAIL: four\nschedule: A1\n")
	for _, want := range []string{"one two three", "four"} {
		if !notes[want] {
			t.Errorf("failNotes(…) = %v, want it to hold %q", notes, want)
		}
	}
	if notes["one two"] || len(notes) != 2 {
		t.Errorf("failNotes(…) = %v, want the two notes whole", notes)
	}
}
