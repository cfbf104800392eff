package gallery_test

import (
	"slices"
	"testing"

	"idemlab/exercises"
)

// reject asserts that check rejects impl, and that the guarantee it names
// first is one of by.
func reject[I any](t *testing.T, check exercises.Check[I], impl I, by []string) {
	t.Helper()
	failures := exercises.Reject(t, check, impl)
	switch {
	case len(failures) == 0:
		t.Errorf("the check accepts this wrong fix")
	case !slices.Contains(by, failures[0].Guarantee):
		t.Errorf("rejected by %s, want by one of %v:\n%s", failures[0].Guarantee, by, exercises.Render("the wrong fix", failures, ""))
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

func TestRepairs(t *testing.T) {
	for _, w := range repairs {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			reject(t, w.check, w.variant(), w.by)
		})
	}
}
