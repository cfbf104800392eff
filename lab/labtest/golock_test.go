package labtest_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// TestGoLocksAreScheduled holds the scheduler to running a handler whose
// deliveries wait for each other on a process-wide sync.Mutex, as one
// process would: correct's handler behind such a lock keeps every
// guarantee of TwoAtOnce, in every interleaving, and the transcript says
// where the second delivery waited. Without the lock-aware scheduler the
// cell stopped, the deliveries wedged on the lock.
func TestGoLocksAreScheduled(t *testing.T) {
	var mu sync.Mutex
	v := wrapped("test/behindamutex", func(h lab.Processor) lab.Processor {
		return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
			mu.Lock()
			defer mu.Unlock()
			return h.Process(ctx, e)
		})
	})
	every := labtest.Scenario{Name: "EveryInterleaving", Short: "Every", Shows: "every interleaving of two", Run: func(r *labtest.Run) {
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(c *labtest.Run, db *labtest.DB, answers []labtest.Answer) {
			c.WantCounts(answers, 1, 1, 0)
			c.WantBalance(db, 1, 500)
		})
	}}
	for _, sc := range []labtest.Scenario{twoAtOnce, every} {
		cell := labtest.RunCell(t, sc, v)
		t.Log(cell.Transcript)
		if !cell.Pass {
			t.Errorf("RunCell(%s, correct behind a mutex) = %q, want a pass", sc.Name, cell.Failures)
			continue
		}
		if !strings.Contains(cell.Transcript, ": waits for a Go lock another delivery holds") {
			t.Errorf("RunCell(%s, correct behind a mutex).Transcript =\n%s\nwant a line saying a session waits for a Go lock", sc.Name, cell.Transcript)
		}
	}
	if cell := labtest.RunCell(t, twoAtOnce, correct.Variant); !cell.Pass {
		t.Errorf("RunCell(TwoAtOnce, correct) after it = %q, want a pass", cell.Failures)
	}
}
