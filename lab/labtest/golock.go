package labtest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/lab"
)

// Which variants need the slow scheduler. Telling a quiet bubble from a
// stack dump (quiet.go) costs a dump of every goroutine per look, five
// times the time of synctest.Wait over a whole matrix, and only a handler
// whose deliveries wait for each other on Go locks needs it. So before a
// variant's first cell, the lab finds out which kind it is, once per test
// binary: a probe, itself scheduled the slow way, delivers one event
// twice, letting the first delivery take k statements (k = 1, 2, …) before
// the second runs as far as it can. A handler that takes a Go lock around
// any stretch of its statements makes the second delivery wait for it at
// some k. A handler that takes one only on some other path (only for one
// kind of event, say) is not seen: its cell then wedges and the watchdog
// stops it, naming the lock (see RunCell).
//
// The probe judges nothing and reads no state: it must work on any
// variant a cell may be given, whatever its tables, and a handler that
// panics or blocks in it says only that no Go lock was seen.

// goLockVariants holds, by probeKey, a *probe: what the probe found, once.
var goLockVariants sync.Map

// A probe is one variant's probe, run once however many cells ask.
type probe struct {
	once sync.Once
	seen bool
}

// goLockCells is held by every cell whose handler waits on Go locks, and
// shared by every probe: such a lock is the test binary's, shared by every
// cell and probe that runs the handler, and a cell whose deliveries waited
// for one held across bubbles, where its scheduler cannot see the holder,
// would have its schedule decided by another test's timing. So those cells
// run one at a time, and never beside a probe.
var goLockCells sync.RWMutex

// probeSteps is how many statements, at most, the probe lets the first
// delivery take before the second runs: more than any handler of the kit
// runs for one event.
const probeSteps = 8

// probeKey tells variants apart for the probe: by name, and by the code of
// their New, so that two wrappers of one handler under one name (a check
// adapts a student's package in more than one way) are probed apart.
func probeKey(v lab.Variant) string {
	return fmt.Sprintf("%s\x00%x", v.Name, reflect.ValueOf(v.New).Pointer())
}

// waitsOnGoLocks reports whether v's deliveries were seen waiting for each
// other on a Go lock, probing v the first time it is asked.
func waitsOnGoLocks(t *testing.T, v lab.Variant) bool {
	p, _ := goLockVariants.LoadOrStore(probeKey(v), &probe{})
	pr := p.(*probe)
	pr.once.Do(func() {
		goLockCells.RLock()
		defer goLockCells.RUnlock()
		pr.seen = probeGoLocks(t, v)
	})
	return pr.seen
}

// probeGoLocks runs the probe on v.
func probeGoLocks(t *testing.T, v lab.Variant) bool {
	cs := &cellState{goLocks: true}
	// done closes when synctest.Test returns; told, when the probe's own
	// story has: synctest.Test may go on waiting for goroutines the handler
	// left blocked on its lock, but the answer is known.
	done, told := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		// synctest.Test panics when the probe's goroutines are left
		// blocked; the probe has its answer by then.
		defer func() { recover() }()
		synctest.Test(t, func(t *testing.T) {
			defer close(told)
			defer func() { recover() }() // a stuck probe: no Go lock seen
			r := NewRun(t, v)
			r.cell = cs
			cs.enter()
			db := r.OpenScheduled()
			// A story that ran into sessionStepLimit ends the probe: the
			// handler loops, and every later story would loop as long.
			for k := 1; k <= probeSteps && !cs.lockWasSeen() && cs.loopReason() == ""; k++ {
				e := lab.Event{Source: "provider-a", EventID: fmt.Sprintf("evt-probe-%d", k), AccountID: 1, Amount: 1}
				first, taken := "", 0
				db.Interleave(func(step int, parked []string, _ string) string {
					if step == 0 {
						first = parked[0]
					}
					for _, name := range parked {
						if (name == first) == (taken < k) {
							if name == first {
								taken++
							}
							return name
						}
					}
					return parked[0]
				}, []lab.Event{e}, []lab.Event{e})
				if taken < k {
					break // the first delivery ran all its statements
				}
			}
		})
	}()
	last, lastAt := cs.progress(), time.Now()
	tick := time.NewTicker(stuckPoll)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-told:
			cs.abandon() // what is left of it stays where it is
			break wait
		case now := <-tick.C:
			if n := cs.progress(); n != last {
				last, lastAt = n, now
			} else if now.Sub(lastAt) >= cellStuckAfter {
				// Stuck, on a lock it never lets go or on something else,
				// by the same measure as a cell (cellStuckAfter): a probe
				// given up sooner on a slow machine would answer "no lock"
				// for a handler that has one.
				// Given up early, a probe slowed by a busy machine could
				// leave a delivery holding the handler's lock for good.
				cs.abandon() // its goroutines are left where they are
				break wait
			}
		}
	}
	return cs.lockWasSeen()
}
