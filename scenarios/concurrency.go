package scenarios

import (
	"time"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Concurrent delivers one event 20 times on 8 goroutines, as the article
// does, and then 64 times on the same 8. The scheduler steps the sessions
// round robin, so every delivery in flight takes its first statement before
// any takes its second: the worst case for a handler that checks before it
// writes. Exactly one delivery applies; every other one is a duplicate; none
// fails.
func Concurrent(r *labtest.Run) {
	for _, shape := range []struct{ deliveries, goroutines int }{{20, 8}, {64, 8}} {
		db := r.OpenScheduled()
		answers := db.Concurrently(spread(copies(credit("evt-3", 500), shape.deliveries), shape.goroutines)...)
		r.WantBalance(db, 1, 500)
		r.WantCounts(answers, 1, shape.deliveries-1, 0)
		r.WantInbox(db, 1)
	}
	r.Notef("20 and 64 deliveries on 8 goroutines: 1 applied, the rest duplicates, no error; balance 500")
}

// Race delivers the same event twice at once, in every interleaving of the
// two deliveries' statements. For a handler that reads before it writes,
// some interleavings let both read "not seen" before either writes; for one
// that takes the lock first, the second delivery waits for the first one's
// COMMIT. In every interleaving: exactly one credit, one applied, one
// duplicate, no error.
func Race(r *labtest.Run) {
	e := credit("evt-3", 500)
	perms := r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(c *labtest.Run, db *labtest.DB, answers []labtest.Answer) {
		c.WantBalance(db, 1, 500)
		c.WantCounts(answers, 1, 1, 0)
	})
	r.Notef("all %d interleavings: one applied, one duplicate; balance 500", len(perms))
}

// ConflictRace delivers one key with two different amounts at once, in
// every interleaving. Whichever delivery wins applies; the other is a
// payload conflict — never a duplicate, never a second credit.
func ConflictRace(r *labtest.Run) {
	a, b := credit("evt-5", 500), credit("evt-5", 700)
	perms := r.Interleavings(nil, [][]lab.Event{{a}, {b}}, func(c *labtest.Run, db *labtest.DB, answers []labtest.Answer) {
		c.WantCounts(answers, 1, 0, 1)
		for _, x := range answers {
			if x.Err == nil && x.Outcome == lab.Applied {
				c.WantBalance(db, 1, x.Event.Amount)
			} else {
				c.WantError(x, lab.ErrPayloadConflict)
			}
		}
	})
	r.Notef("all %d interleavings: one applied, the other a payload conflict", len(perms))
}

// LockTimeout holds the write lock on another connection while an event
// arrives. The handler waits its busy timeout (on the bubble's fake clock:
// five seconds that take no time) and must answer busy — a timeout proves
// nothing about the event, so it is never a duplicate. Once the lock is
// released the redelivery applies.
func LockTimeout(r *labtest.Run) {
	db := r.Open()
	e := credit("evt-4", 500)
	release := db.HoldWriteLock()
	r.WantError(db.Deliver(e), lab.ErrBusy)
	// A caller with a deadline shorter than the busy timeout gets its
	// answer at its deadline, not after the busy timeout.
	start := time.Now() // the bubble's clock: fake, and exact
	r.WantError(db.AttemptWithin(e, 50*time.Millisecond), lab.ErrBusy)
	if waited := time.Since(start); waited > time.Second {
		r.Errorf("a delivery whose caller gives up after 50 ms answered after %v: it waited out the lock, not the caller's deadline", waited)
	}
	release()
	r.WantOutcome(db.Deliver(e), lab.Applied)
	r.WantBalance(db, 1, 500)
	r.Notef("locked: busy; released: applied; balance 500")
}

// spread deals events to n sessions, the i-th event to session i mod n.
func spread(events []lab.Event, n int) [][]lab.Event {
	sessions := make([][]lab.Event, n)
	for i, e := range events {
		sessions[i%n] = append(sessions[i%n], e)
	}
	return sessions
}

// CommitWait holds a read transaction on another connection, in
// rollback-journal mode, across a delivery: the delivery takes the write
// lock and writes, but its COMMIT must wait for the reader, and the reader
// outlasts the busy timeout. The COMMIT fails: the answer is busy, nothing
// is kept (the failed COMMIT rolled back), and once the reader is gone the
// redelivery applies.
func CommitWait(r *labtest.Run) {
	db := r.Open()
	e := credit("evt-10", 500)
	release := db.HoldReadLock()
	r.WantError(db.Deliver(e), lab.ErrBusy)
	release()
	r.WantInbox(db, 0)
	r.WantOutcome(db.Deliver(e), lab.Applied)
	r.WantBalance(db, 1, 500)
	r.Notef("a reader held its lock past the busy timeout: the COMMIT answered busy, nothing kept; the retry applied")
}
