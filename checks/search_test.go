package checks

import (
	"strings"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/naive/sourceless"
	"idemlab/variants"
)

// TestSearchesHoldEquivalents holds correct/ and every equivalent handler
// (correct/ written another way, see variants.Equivalents) to the searches
// of the exercises that repair a handler: a search that rejects one judges
// how a handler is written, not what it does.
func TestSearchesHoldEquivalents(t *testing.T) {
	searches := map[string]Check[lab.Variant]{
		"KeySearch": keySearch, "AccountSearch": accountSearch, "RaceSearch": raceSearch,
		"FaultSearch": faultSearch, "RefusalSearch": refusalSearch,
	}
	for _, v := range append([]lab.Variant{correct.Variant}, variants.Equivalents...) {
		for name, search := range searches {
			t.Run(name+"/"+v.Name, func(t *testing.T) {
				t.Parallel()
				Verify(t, search, v)
			})
		}
	}
}

// TestSearchTellsItsStory holds a search's verdict to what a student needs:
// the guarantee's name, the story that broke it, and the command that
// replays it with its seed. (The first 20 stories, here: the quick suite's
// budget may not reach the one that breaks naive/sourceless.)
func TestSearchTellsItsStory(t *testing.T) {
	spec, v := keySearchOn(sourceless.Variant)
	c := &Checker{T: t, firstOnly: true}
	var broke int
	c.scenario(spec.scenario(0, 20, &broke), v)
	failures := c.Failures()
	if len(failures) != 1 || failures[0].Guarantee != "KeySearch" {
		t.Fatalf("KeySearch on naive/sourceless, stories 1 to 20 = %v, want one failure of KeySearch", failures)
	}
	for _, want := range []string{"the story:", "replay it:", "go test ./checks -exercise=sourcescope -exercise.show=KeySearch", "-rapid.seed="} {
		if !strings.Contains(failures[0].Transcript, want) {
			t.Errorf("KeySearch's transcript for naive/sourceless lacks %q:\n%s", want, failures[0].Transcript)
		}
	}
}
