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
// writes an id that is a number one way, and 0042 and 42 are two events.
var numericIDs = labtest.Scenario{
	Name:  "NumericIDs",
	Short: "Num",
	Shows: "0042 and 42 are two events: both apply, and each repeat is its own duplicate",
	Run: func(r *labtest.Run) {
		db := r.Open()
		padded := lab.Event{Source: "provider-a", EventID: "0042", AccountID: 1, Amount: 500}
		plain := padded
		plain.EventID, plain.Amount = "42", 700
		r.WantOutcome(db.Deliver(padded), lab.Applied)
		r.WantOutcome(db.Deliver(plain), lab.Applied)
		r.WantOutcome(db.Deliver(padded), lab.Duplicate)
		r.WantBalance(db, 1, 1200)
	},
}

func TestSolutionNewVariant(t *testing.T) {
	t.Parallel()
	checks.Verify(t, checks.NewVariant, checks.NewVariantWork{Variant: newvariantsolution.Variant, Scenario: numericIDs})
}

// Exercise 12's solution is correct/'s MariaDB handler (correct.MariaDB):
// the INSERT first, its count read, the stored payload compared on 0
// rows. Without IDEMLAB_MARIADB it skips (TestMain has said so).
func TestSolutionRepeatableRead(t *testing.T) {
	t.Parallel()
	checks.Verify(t, checks.RepeatableRead, correct.Variant)
}
