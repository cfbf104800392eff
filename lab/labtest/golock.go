package labtest

import (
	"fmt"
	"sync"
	"testing"

	"idemlab/lab"
)

// Which variants need the slow scheduler. Telling a quiet bubble from a
// stack dump (quiet.go) costs a dump of every goroutine per look, ten times
// the time of synctest.Wait over a whole matrix, and only a handler whose
// deliveries wait for each other on Go locks needs it. So before a
// variant's first cell, the lab finds out which kind it is, once per test
// binary: a probe cell, itself scheduled the slow way, delivers one event
// twice, letting the first delivery take k statements (k = 1, 2, …) before
// the second runs as far as it can. A handler that takes a Go lock around
// any stretch of its statements makes the second delivery wait for it at
// some k. A handler that takes one only on some other path (only for one
// kind of event, say) is not seen: its cell then wedges and the watchdog
// stops it, naming the lock (see RunCell).

// goLockVariants holds, by variant name, what the probe found.
var goLockVariants sync.Map

// probeSteps is how many statements, at most, the probe lets the first
// delivery take before the second runs: more than any handler of the kit
// runs for one event.
const probeSteps = 8

// waitsOnGoLocks reports whether v's deliveries were seen waiting for each
// other on a Go lock, probing v the first time it is asked.
func waitsOnGoLocks(t *testing.T, v lab.Variant) bool {
	if seen, ok := goLockVariants.Load(v.Name); ok {
		return seen.(bool)
	}
	probe := Scenario{Name: "GoLockProbe", Run: func(r *Run) {
		db := r.OpenScheduled()
		for k := 1; k <= probeSteps && !r.cell.lockWasSeen(); k++ {
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
	}}
	cs := &cellState{goLocks: true}
	runCell(t, probe, v, cs)
	cs.mu.Lock()
	seen := cs.sawGoLock
	cs.mu.Unlock()
	goLockVariants.Store(v.Name, seen)
	return seen
}
