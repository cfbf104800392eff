package checks_test

import (
	"testing"

	"idemlab/checks"
	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	businesskeysolution "idemlab/solutions/businesskey"
	newvariantsolution "idemlab/solutions/newvariant"
	outboxsolution "idemlab/solutions/outbox"
	replaysolution "idemlab/solutions/replay"
	retentionsolution "idemlab/solutions/retention"
)

// The tests below hold every exercise's reference solution to the
// exercise's own check, on every go test ./...: an exercise whose solution
// fails its check ships broken. The solutions use nothing of the starting
// points but their types, so a half-finished exercise that compiles cannot
// turn them red.

// The exercises that repair a naive handler have correct/ as their
// solution: the student compares with it when done.
func TestSolutionRepairs(t *testing.T) {
	t.Parallel()
	checks.VerifyAll(t, map[string]checks.Check[lab.Variant]{
		"sourcescope":    checks.SourceScope,
		"missingaccount": checks.MissingAccount,
		"checkthenact":   checks.CheckThenAct,
		"markfirst":      checks.MarkFirst,
		"insertorignore": checks.InsertOrIgnore,
	}, correct.Variant)
}

func TestSolutionReplay(t *testing.T) {
	t.Parallel()
	checks.Verify(t, checks.Replay, replaysolution.Service)
}

func TestSolutionBusinessKey(t *testing.T) {
	t.Parallel()
	checks.Verify(t, checks.BusinessKey, businesskeysolution.Service)
}

func TestSolutionRetention(t *testing.T) {
	t.Parallel()
	checks.Verify(t, checks.Retention, retentionsolution.Service)
}

func TestSolutionOutbox(t *testing.T) {
	t.Parallel()
	checks.Verify(t, checks.Outbox, outboxsolution.Service)
}

// The lab's own DSN, a file at path, is the solution of the memory exercise.
func TestSolutionMemory(t *testing.T) {
	t.Parallel()
	checks.Verify(t, checks.Memory, correct.DSN)
}

// The newvariant solution's scenario: the handler of solutions/newvariant
// folds event ids to lower case, and evt-A and evt-a are two events.
var caseSensitiveIDs = labtest.Scenario{
	Name:  "CaseSensitiveIDs",
	Short: "Case",
	Shows: "evt-A and evt-a are two events: both apply",
	Run: func(r *labtest.Run) {
		db := r.Open()
		upper := lab.Event{Source: "provider-a", EventID: "evt-A", AccountID: 1, Amount: 500}
		lower := upper
		lower.EventID = "evt-a"
		r.WantOutcome(db.Deliver(upper), lab.Applied)
		r.WantOutcome(db.Deliver(lower), lab.Applied)
		r.WantBalance(db, 1, 1000)
	},
}

func TestSolutionNewVariant(t *testing.T) {
	t.Parallel()
	checks.Verify(t, checks.NewVariant, checks.NewVariantWork{Variant: newvariantsolution.Variant, Scenario: caseSensitiveIDs})
}
