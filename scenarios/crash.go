package scenarios

import (
	"fmt"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Crash kills the process that is delivering an event, leaving its files
// as SIGKILL would (labtest.DB.Crash says how; TestCrashIsAKill holds that
// to a real SIGKILL), before and after each of its statements in turn —
// after COMMIT too, when the work is durable but the answer never left — in
// both journal modes. The database is reopened as a restarted service
// would, and must pass PRAGMA integrity_check and hold all of the event or
// none of it; the redelivery must then finish the job exactly once.
func Crash(r *labtest.Run) {
	cases, broken := 0, 0
	for _, j := range journals {
		for k := 1; ; k++ {
			clean := false
			for _, when := range []labtest.When{labtest.Before, labtest.After} {
				held := r.Case(fmt.Sprintf("%s, killed %s statement %d", j.name, when, k), func(c *labtest.Run) {
					db := j.open(c)
					e := credit("evt-7", 500)
					killed, a := db.Crash(e, when, k)
					if !killed {
						clean = true
						c.WantOutcome(a, lab.Applied)
						return
					}
					cases++
					kept := recovered(c, db, e, fmt.Sprintf("killed %s statement %d", when, k))
					finishOnce(c, db, e, kept)
				})
				if !held {
					broken++
				}
			}
			if clean {
				break // the delivery has fewer than k statements: it ran clean
			}
		}
	}
	if broken == 0 {
		r.Notef("%d crash points in both journal modes: each recovered to all or nothing, and the redelivery finished the job once", cases)
	}
}

// recovered checks that the reopened database holds all of e or none of it,
// and reports whether it holds all.
func recovered(c *labtest.Run, db *labtest.DB, e lab.Event, how string) bool {
	kept, half := keptWhole(db, e)
	if half != "" {
		c.Errorf("Process(%v) %s, then reopened = %s, want all of the event or none", e, how, half)
	}
	return kept
}
