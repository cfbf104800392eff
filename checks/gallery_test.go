package checks_test

// The gallery_*_test.go files keep, as tests, the wrong fixes a student in
// a hurry makes for each exercise — fix one of three places, move the
// check outside the transaction, catch the unique violation and call it a
// duplicate, drop the payload comparison, change a boundary by one — and
// assert that the exercise's own check rejects every one of them, for the
// reason expected. A check's strength is then a tested property, the way
// rapid's own tests assert that a checker catches a known-buggy
// implementation. They also hold the exercises that are near-copies of
// naive variants to their twins (TestNoDrift).

import (
	"slices"
	"testing"

	"idemlab/checks"
)

// reject asserts that check rejects impl, and that the guarantee it names
// first is one of by. In the quick suite only the guarantees of by run, so
// there the second half holds by construction; the full suite, which runs
// every guarantee in order, is what holds it.
func reject[I any](t *testing.T, check checks.Check[I], impl I, by []string) {
	t.Helper()
	failures := checks.RejectBy(t, check, impl, by)
	switch {
	case len(failures) == 0:
		t.Errorf("RejectBy(the wrong fix, %v) = no failure, want one%s", by, checks.AcceptedNote(t))
	case !slices.Contains(by, failures[0].Guarantee):
		t.Errorf("RejectBy(the wrong fix, %v) = first rejected by %s, want by one of %v:\n%s",
			by, failures[0].Guarantee, by, checks.Render("the wrong fix", "", failures, ""))
	default:
		t.Logf("rejected by %s: %s", failures[0].Guarantee, first(failures[0].Lines))
	}
}

func first(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

func TestGalleryRepairs(t *testing.T) {
	for _, w := range repairs {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			reject(t, w.check, w.variant(), w.by)
		})
	}
}
