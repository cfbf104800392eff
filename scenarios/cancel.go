package scenarios

import (
	"database/sql"
	"errors"
	"fmt"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Cancel is the caller giving up, as an HTTP client that disconnects does:
// before the call, and after each statement of the delivery in turn, for a
// new event and for a repeat. Whenever it happens, the answer is busy (the
// handler cannot know what became of the event) or, if the work was all
// done before the caller left, the success it earned; never "other error",
// never half the work. The redelivery then finishes the job once.
func Cancel(r *labtest.Run) {
	cases, broken := 0, 0
	try := func(name string, body func(c *labtest.Run)) {
		cases++
		if !r.Case(name, body) {
			broken++
		}
	}
	for _, repeat := range []bool{false, true} {
		what := "a new event"
		if repeat {
			what = "a repeat"
		}
		try(what+", cancelled before the call", func(c *labtest.Run) {
			db, e := cancelSetup(c, repeat)
			c.WantError(db.Deliver(e, labtest.Delivery{Unchecked: true, Cancelled: true}), lab.ErrBusy)
			finishAfterCancel(c, db, e, repeat)
		})
		try(what+", cancelled as its COMMIT starts", func(c *labtest.Run) {
			// database/sql rolls back a cancelled transaction on a
			// goroutine of its own; when that wins the race, Commit
			// answers only sql.ErrTxDone. It happened in about 1 of 300
			// short-deadline deliveries; here it happens every time.
			db, e := cancelSetup(c, repeat)
			db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpCommit, Cancel: true, Err: sql.ErrTxDone})
			a := db.Deliver(e, labtest.Delivery{Unchecked: true})
			db.Lift()
			if !errors.Is(a.Err, lab.ErrBusy) && !(repeat && a.Err == nil && a.Outcome == lab.Duplicate) {
				c.Errorf("%s: Process(%v) = %v when its caller cancelled as COMMIT started, want busy", a.Session, e, a)
			}
			if !repeat {
				allOrNothing(c, db, a)
			}
			finishAfterCancel(c, db, e, repeat)
		})
		for k := 1; ; k++ {
			fired := false
			try(fmt.Sprintf("%s, cancelled after statement %d", what, k), func(c *labtest.Run) {
				db, e := cancelSetup(c, repeat)
				f := db.Inject(labtest.Fault{When: labtest.After, N: k, Cancel: true})
				a := db.Deliver(e, labtest.Delivery{Unchecked: true})
				db.Lift()
				if f.Fired() == 0 {
					return // the delivery has fewer than k statements
				}
				fired = true
				switch {
				case a.Err != nil && !errors.Is(a.Err, lab.ErrBusy):
					c.Errorf("%s: Process(%v) = %v after its caller cancelled, want busy (or the success it earned)", a.Session, e, a)
				case a.Err == nil && !repeat && a.Outcome != lab.Applied:
					c.Errorf("%s: Process(%v) = %v after its caller cancelled, want busy or applied", a.Session, e, a)
				}
				if !repeat {
					allOrNothing(c, db, a)
				}
				finishAfterCancel(c, db, e, repeat)
			})
			if !fired {
				cases-- // the last try ran clean and counts for nothing
				break
			}
		}
	}
	if broken == 0 {
		r.Notef("%d cancellations, before the call and after every statement: busy or earned success, never half; the redelivery finished once", cases)
	}
}

// cancelSetup opens a database for one cancellation case; for a repeat, the
// event is delivered and applied first.
func cancelSetup(c *labtest.Run, repeat bool) (*labtest.DB, lab.Event) {
	db := c.Open()
	e := credit("evt-8", 500)
	if repeat {
		c.WantOutcome(db.Deliver(e), lab.Applied)
	}
	return db, e
}

// finishAfterCancel redelivers e and checks that the event ends applied
// exactly once.
func finishAfterCancel(c *labtest.Run, db *labtest.DB, e lab.Event, repeat bool) {
	kept, _ := keptWhole(db, e)
	want := lab.Applied
	if kept || repeat {
		want = lab.Duplicate
	}
	c.WantOutcome(db.Deliver(e), want)
	c.WantBalance(db, 1, e.Amount)
	c.WantInbox(db, 1)
}
