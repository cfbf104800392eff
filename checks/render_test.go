package checks

import (
	"fmt"
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// raceFailure is naive/checkthenact's failure of Race, from a real run: the
// story with the widest lines before transcripts were wrapped.
func raceFailure(t *testing.T) Failure {
	sc := scenarios.Named(scenarios.All, "Race")
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
		got := Render("exercises/checkthenact", "checkthenact", []Failure{race, long}, show)
		if line, n := report.WidestLine(got); n > StoryWidth {
			t.Errorf("Render(…, %q) has a line of %d runes, want at most %d:\n%s\nwhole:\n%s", show, n, StoryWidth, line, got)
		}
	}
	got := Render("exercises/checkthenact", "checkthenact", []Failure{race}, "")
	_, full, _ := strings.Cut(got, "Race, in full:\n")
	if !strings.HasPrefix(full, "transcript:\n") {
		t.Errorf("Render(race) lists failures the transcript notes again:\n%s", got)
	}
	if !strings.Contains(race.Transcript, "FAIL: 2 deliveries = 1 applied, 0 duplicate, 1 error, want 1, 1, 0 (first\n") {
		t.Errorf("Race's transcript no longer wraps a FAIL line: the check above no longer tests failNotes:\n%s", race.Transcript)
	}
}

// TestRenderCommands requires the commands a story ends with to check the
// exercise named, and a story of no exercise (a reference solution, a
// wrong fix, which no command checks alone) to end with none.
func TestRenderCommands(t *testing.T) {
	var transcript strings.Builder
	for i := range transcriptLines + 5 {
		fmt.Fprintf(&transcript, "A%d: SELECT %d -> ok\n", i+1, i)
	}
	long := Failure{Guarantee: "Race", Shows: "two deliveries at once", Lines: []string{"balance of account 1 = 1000, want 500"}, Transcript: transcript.String()}
	other := Failure{Guarantee: "Duplicate", Shows: "a repeat is a duplicate", Lines: []string{"B: Process(…) = applied, want duplicate"}}
	got := Render("exercises/checkthenact", "checkthenact", []Failure{long, other}, "")
	for _, want := range []string{
		"  … 5 more lines:\n    go test ./checks -exercise=checkthenact -exercise.show=Race\n",
		"\nsee another in full:\n  go test ./checks -exercise=checkthenact -exercise.show=Duplicate",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Render(exercises/checkthenact, checkthenact, …) does not hold %q:\n%s", want, got)
		}
	}
	got = Render("the reference solution", "", []Failure{long, other}, "")
	if strings.Contains(got, "go test") || !strings.HasSuffix(got, "  … 5 more lines\n") {
		t.Errorf("Render(the reference solution, \"\", …) = %s, want the transcript capped and no command", got)
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
