package labtest_test

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// wrapped is correct's variant with its handler wrapped by wrap: a way to
// make handlers that go wrong in ways no variant package should.
func wrapped(name string, wrap func(lab.Processor) lab.Processor) lab.Variant {
	v := correct.Variant
	v.Name, v.Mistake, v.Postgres = name, "test handler", nil
	v.New = func(db *sql.DB) lab.Processor { return wrap(correct.New(db)) }
	return v
}

type processorFunc func(context.Context, lab.Event) (lab.Outcome, error)

func (f processorFunc) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	return f(ctx, e)
}

// twoAtOnce delivers one event twice at once, round robin, and once more.
var twoAtOnce = labtest.Scenario{Name: "TwoAtOnce", Short: "Two", Shows: "two at once", Run: func(r *labtest.Run) {
	db := r.OpenScheduled()
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	db.Concurrently([]lab.Event{e}, []lab.Event{e})
	r.WantOutcome(db.Deliver(e), lab.Duplicate)
}}

// TestCellsSurviveTheirHandler holds RunCell to its promise that a cell
// which cannot go on is a verdict, and the test binary goes on to the next
// cell: a handler that panics, one that blocks for good on a channel (every
// goroutine durably blocked), and one that blocks on a sync.Mutex held by a
// parked delivery (which only the watchdog sees). Each must be a failed
// cell that says what happened, and a correct cell must run after it.
func TestCellsSurviveTheirHandler(t *testing.T) {
	t.Cleanup(labtest.SetCellStuckAfter(3 * time.Second))
	var mu sync.Mutex
	outside := make(chan struct{}) // a receive on it is not durable in a bubble
	for _, c := range []struct {
		name   string
		wrap   func(lab.Processor) lab.Processor
		want   string
		within time.Duration // the watchdog's wait is 3 s here
	}{
		{"panics", func(h lab.Processor) lab.Processor {
			return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
				o, err := h.Process(ctx, e)
				if o == lab.Duplicate {
					panic("a duplicate was not expected")
				}
				return o, err
			})
		}, "panicked instead of answering: panic: a duplicate was not expected (at lab/labtest/stop_test.go:", time.Second},
		{"blocks on a channel", func(h lab.Processor) lab.Processor {
			// Made inside the cell's bubble, where New runs: a receive that
			// nothing will ever answer blocks durably.
			forever := make(chan struct{})
			return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
				o, err := h.Process(ctx, e)
				if o == lab.Duplicate {
					<-forever
				}
				return o, err
			})
			// The lab's probe of the handler comes first (see golock.go),
			// slower under the race detector: 3 s, far within the 30 s a
			// check may take to report a hang.
		}, "blocked outside the database, where the lab cannot see or schedule them: sessions [B] have made no progress", 3 * time.Second},
		{"blocks on a channel made outside the cell", func(h lab.Processor) lab.Processor {
			return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
				o, err := h.Process(ctx, e)
				if o == lab.Duplicate {
					<-outside
				}
				return o, err
			})
		}, "a goroutine waits (chan receive) in idemlab/lab/labtest_test.TestCellsSurviveTheirHandler", 30 * time.Second},
		{"blocks on a mutex", func(h lab.Processor) lab.Processor {
			return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
				mu.Lock() // never unlocked: the second delivery waits for good
				return h.Process(ctx, e)
			})
			// Seconds more: the lab first probes the handler (after any
			// probe of the other cases that is stuck on its handler, see
			// golock.go); still far within the 30 s a check may take to
			// report a hang. Which
			// says it first, the scheduler ("no session can take a step
			// that would free it") or the watchdog ("no statement ran"),
			// depends on the machine (the race detector slows the first):
			// either names the lock and the handler's line that waits.
		}, "a goroutine waits (sync.Mutex.Lock) in idemlab/lab/labtest_test.TestCellsSurviveTheirHandler.func4.1 at lab/labtest/stop_test.go:", 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			cell := labtest.RunCell(t, twoAtOnce, wrapped("test/"+strings.ReplaceAll(c.name, " ", ""), c.wrap))
			if cell.Pass || !strings.Contains(strings.Join(cell.Failures, "\n"), c.want) {
				t.Errorf("RunCell(TwoAtOnce, a handler that %s) = pass %v, %q, want a failure saying %q", c.name, cell.Pass, cell.Failures, c.want)
			}
			t.Log(strings.Join(cell.Failures, "\n"))
			if took := time.Since(start); took > c.within {
				t.Errorf("RunCell(TwoAtOnce, a handler that %s) took %v, want a verdict within %v", c.name, took, c.within)
			}
			if cell := labtest.RunCell(t, twoAtOnce, correct.Variant); !cell.Pass {
				t.Errorf("RunCell(TwoAtOnce, correct) after it = %q, want a pass", cell.Failures)
			}
		})
	}
}

// TestLabReadsAreTheLabs holds the lab's own reads to being its own: a
// read of the balances while a delivery is parked inside Process must not
// be taken for the handler's call without a context (which the driver
// refuses and reports against the handler).
func TestLabReadsAreTheLabs(t *testing.T) {
	sc := labtest.Scenario{Name: "ReadMidway", Short: "Read", Shows: "the lab reads mid-delivery", Run: func(r *labtest.Run) {
		db := r.OpenScheduled()
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		db.Interleave(func(step int, parked []string, robin string) string {
			if step == 2 {
				if got := db.Balance(1); got != 0 {
					r.Errorf("Balance(1) while A is inside Process = %d, want 0", got)
				}
			}
			return robin
		}, []lab.Event{e})
		r.WantBalance(db, 1, 500)
	}}
	if cell := labtest.RunCell(t, sc, correct.Variant); !cell.Pass {
		t.Errorf("RunCell(ReadMidway, correct) = %q, want a pass: the lab's read was taken for the handler's", cell.Failures)
	}
}

// TestCellsSurviveALoop holds the lab to stopping a cell whose handler
// runs statements without end (a retry without a bound): nothing ever
// blocks, so only the count of its statements tells it from work. Not
// beside TestCellsSurviveTheirHandler's cases: the loop keeps a core busy
// for seconds, and theirs are held to wall-clock bounds.
func TestCellsSurviveALoop(t *testing.T) {
	loops := wrapped("test/loops", func(h lab.Processor) lab.Processor {
		// A repeat runs its delivery again and again: every statement
		// reaches the database, and the delivery never ends.
		return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
			for {
				if o, err := h.Process(ctx, e); o != lab.Duplicate {
					return o, err
				}
			}
		})
	})
	start := time.Now()
	cell := labtest.RunCell(t, twoAtOnce, loops)
	const want = "ran 1000 statements without its delivery ending: the handler runs them in a loop"
	if cell.Pass || !strings.Contains(strings.Join(cell.Failures, "\n"), want) {
		t.Errorf("RunCell(TwoAtOnce, a handler that loops) = pass %v, %q, want a failure saying %q", cell.Pass, cell.Failures, want)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("RunCell(TwoAtOnce, a handler that loops) took %v, want a verdict within 30s", took)
	}
}
