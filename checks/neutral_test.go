package checks

import (
	"strings"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
)

// TestNeutralIsNotAFailure holds a check to what a neutral cell is: a
// scenario that could not judge the student's handler (its fault strikes
// a statement the handler never runs) is not a failure of the fix — the
// check must not fail on it, as it would if it read a neutral cell as
// broken — and not a pass it can be silent about: Neutrals lists it, and
// RenderNeutrals tells the student, with why.
func TestNeutralIsNotAFailure(t *testing.T) {
	sc := labtest.Scenario{Name: "NeverFires", Shows: "a fault before a DELETE, which no handler runs", Run: func(r *labtest.Run) {
		db := r.Open()
		db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpDelete, Table: "inbox"})
		r.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}), labtest.ErrInjected)
	}}
	c := &Checker{T: t}
	if held := c.Scenario(sc, correct.Variant); !held || len(c.Failures()) != 0 {
		t.Errorf("Checker.Scenario(a scenario that cannot judge the handler) = %v, failures %v; want true and none", held, c.Failures())
	}
	const why = "NeverFires: the fault 'before the DELETE from inbox' never fired: the handler ran no such statement"
	if got := c.Neutrals(); len(got) != 1 || got[0] != why {
		t.Errorf("Checker.Neutrals() = %q, want [%q]", got, why)
	}
	told := RenderNeutrals("exercises/markfirst", c.Neutrals())
	for _, want := range []string{"1 scenario could not judge it", "Not a failure of your fix", report.Neutral + " " + why[:40]} {
		if !strings.Contains(strings.Join(strings.Fields(told), " "), want) {
			t.Errorf("RenderNeutrals(…) =\n%s\nwant it to say %q", told, want)
		}
	}
	for _, line := range strings.Split(told, "\n") {
		if _, w := report.WidestLine(line); w > StoryWidth {
			t.Errorf("RenderNeutrals(…) has a line %d wide, want at most %d: %q", w, StoryWidth, line)
		}
	}
	if got := RenderNeutrals("exercises/markfirst", nil); got != "" {
		t.Errorf("RenderNeutrals(none) = %q, want \"\"", got)
	}
}
