package labtest_test

import (
	"context"
	"runtime"
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

// TestQuietWhateverTheDumpAdds holds the Go-lock scheduler to seeing its
// bubble quiet whatever the runtime writes between a goroutine's wait and
// its bubble in a stack dump: how long the goroutine has waited, once that
// is a minute or more ("chan receive (durable), 1 minutes, synctest bubble
// 6"), or that it is locked to its thread. A goroutine so marked was
// counted as one that runs, the bubble never looked quiet, and the cell was
// stopped by the watchdog as blocked outside the database: the bubble's
// own root has waited a minute in every cell that runs longer, so every
// Go-lock cell did so a minute in. Here a goroutine of the cell waits
// locked to its thread (a minute's wait would take a minute) while
// correct's handler behind a mutex is delivered twice at once: the cell
// must end with its verdict, a pass, never stopped.
func TestQuietWhateverTheDumpAdds(t *testing.T) {
	var mu sync.Mutex
	v := wrapped("test/behindamutexbesidealockedthread", func(h lab.Processor) lab.Processor {
		return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
			mu.Lock()
			defer mu.Unlock()
			return h.Process(ctx, e)
		})
	})
	sc := labtest.Scenario{Name: "BesideALockedThread", Short: "Lockd", Shows: "two at once beside a thread-locked goroutine",
		Run: func(r *labtest.Run) {
			locked, stop := make(chan struct{}), make(chan struct{})
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				close(locked)
				<-stop
			}()
			<-locked
			defer close(stop)
			twoAtOnce.Run(r)
		}}
	cell := labtest.RunCell(t, sc, v)
	if !cell.Pass || strings.Contains(cell.Transcript, "STOPPED") {
		t.Fatalf("RunCell(%s, correct behind a mutex) = %q, want a pass\n%s", sc.Name, cell.Failures, cell.Transcript)
	}
	if !strings.Contains(cell.Transcript, ": waits for a Go lock another delivery holds") {
		t.Errorf("RunCell(%s, correct behind a mutex).Transcript =\n%s\nwant a line saying a session waits for a Go lock", sc.Name, cell.Transcript)
	}
}
