package checks_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"idemlab/checks"
	"idemlab/correct"
	"idemlab/lab"
)

// TestGalleryEndlessRetry keeps a blind student's wrong fix of exercise 4
// (checks/testdata/blind/round2/checkthenact__retry_busy_forever.diff):
// correct/'s transaction, run again for as long as it answers busy. A
// lock held longer than any wait becomes a retry without end instead of a
// 503; and once the caller gives up, every statement refuses its
// cancelled context at once, the handler classifies that as busy, and the
// loop spins without ever blocking, so no wait shows the cell stalled.
// The lab stops a session that runs more statements than any scenario
// needs (labtest's sessionStepLimit), and names the loop.
//
// Its handler goes on spinning after the lab has given its cell up (a
// goroutine cannot be stopped from outside), and a spinning goroutine
// keeps every later cell that reads the binary's goroutines (a handler's
// Go locks, labtest's quiet.go) from ever seeing its own bubble quiet. So
// the check runs in a process of its own, the test binary started again
// for this test alone, which ends with it.
func TestGalleryEndlessRetry(t *testing.T) {
	if os.Getenv(ownProcessEnv) == "" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^TestGalleryEndlessRetry$", "-test.v")
		cmd.Env = append(os.Environ(), ownProcessEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestGalleryEndlessRetry") {
			t.Fatalf("TestGalleryEndlessRetry in a process of its own = %v, want a pass:\n%s", err, out)
		}
		return
	}
	v := correct.Variant
	v.Name, v.Mistake = "gallery/checkthenact/retry-busy-forever", "correct/'s transaction retried for as long as it answers busy"
	v.Postgres, v.MariaDB = nil, nil
	v.New = func(db *sql.DB) lab.Processor { return retryWhileBusy{correct.New(db)} }
	reject(t, checks.CheckThenAct, v, []string{"LockTimeout", "CommitWait", "Cancel", "Property", "RaceSearch"})
}

// retryWhileBusy runs h's delivery again for as long as it answers busy.
type retryWhileBusy struct{ h lab.Processor }

func (r retryWhileBusy) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	for {
		out, err := r.h.Process(ctx, e)
		if !errors.Is(err, lab.ErrBusy) {
			return out, err
		}
	}
}

// ownProcessEnv is set in the process a test starts to run itself alone.
const ownProcessEnv = "IDEMLAB_OWN_PROCESS"
