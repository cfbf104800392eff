// Package solutions_test holds every exercise's reference solution to the
// exercise's own check, on every go test ./...: an exercise whose solution
// fails its check ships broken. The solutions use nothing of the starting
// points but their types and checks, so a half-finished exercise cannot
// turn this test red.
package solutions_test

import (
	"testing"

	"idemlab/correct"
	"idemlab/exercises"
	"idemlab/exercises/businesskey"
	"idemlab/exercises/checkthenact"
	"idemlab/exercises/insertorignore"
	"idemlab/exercises/markfirst"
	"idemlab/exercises/memory"
	"idemlab/exercises/missingaccount"
	"idemlab/exercises/newvariant"
	"idemlab/exercises/outbox"
	"idemlab/exercises/replay"
	"idemlab/exercises/retention"
	"idemlab/exercises/sourcescope"
	"idemlab/lab"
	businesskeysolution "idemlab/solutions/businesskey"
	newvariantsolution "idemlab/solutions/newvariant"
	outboxsolution "idemlab/solutions/outbox"
	replaysolution "idemlab/solutions/replay"
	retentionsolution "idemlab/solutions/retention"
)

// The exercises that repair a naive handler have correct/ as their
// solution: the student compares with it when done.
func TestRepairs(t *testing.T) {
	t.Parallel()
	exercises.VerifyAll(t, map[string]exercises.Check[lab.Variant]{
		"sourcescope":    sourcescope.Check,
		"missingaccount": missingaccount.Check,
		"checkthenact":   checkthenact.Check,
		"markfirst":      markfirst.Check,
		"insertorignore": insertorignore.Check,
	}, correct.Variant)
}

func TestReplay(t *testing.T) {
	t.Parallel()
	exercises.Verify(t, replay.Check, replaysolution.Service)
}

func TestBusinessKey(t *testing.T) {
	t.Parallel()
	exercises.Verify(t, businesskey.Check, businesskeysolution.Service)
}

func TestRetention(t *testing.T) {
	t.Parallel()
	exercises.Verify(t, retention.Check, retentionsolution.Service)
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	exercises.Verify(t, outbox.Check, outboxsolution.Service)
}

// The lab's own DSN, a file at path, is the solution of the memory exercise.
func TestMemory(t *testing.T) {
	t.Parallel()
	exercises.Verify(t, memory.Check, correct.DSN)
}

func TestNewVariant(t *testing.T) {
	t.Parallel()
	exercises.Verify(t, newvariant.Check, newvariantsolution.Work)
}
