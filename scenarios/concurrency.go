package scenarios

import (
	"errors"
	"fmt"
	"time"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Concurrent delivers one event 20 times on 8 goroutines, as the article
// does, and then 64 times on the same 8. The scheduler steps the sessions
// round robin, so every delivery in flight takes its first statement before
// any takes its second: the worst case for a handler that checks before it
// writes. Exactly one delivery applies; every other one is a duplicate.
//
// None may fail, with one exception that is SQLite's and not the handler's:
// a delivery that waited for the write lock for the whole busy timeout may
// answer busy. SQLite's busy handler is not fair (a waiter that has waited
// long polls every 100 ms, a newcomer every millisecond), so with a
// connection per goroutine the same delivery can lose the lock to
// newcomers until its time is up, in production as here. Busy after a full
// wait says "retry later", which is true and safe; busy sooner is a handler
// that gave up before it had to (naive/deferred's failed lock upgrade, a
// busy_timeout of 0).
func Concurrent(r *labtest.Run) {
	patient := 0
	for _, shape := range []struct{ deliveries, goroutines int }{{20, 8}, {64, 8}} {
		db := r.OpenScheduled()
		answers := db.Concurrently(spread(copies(credit("evt-3", 500), shape.deliveries), shape.goroutines)...)
		r.WantBalance(db, 1, 500)
		var answered []labtest.Answer
		for _, a := range answers {
			if errors.Is(a.Err, lab.ErrBusy) && a.Took >= busyTimeout {
				patient++
				continue
			}
			answered = append(answered, a)
		}
		r.WantCounts(answered, 1, len(answered)-1, 0)
		r.WantInbox(db, 1)
	}
	note := "20 and 64 deliveries on 8 goroutines: 1 applied, the rest duplicates, no error; balance 500"
	if patient > 0 {
		note = fmt.Sprintf("20 and 64 deliveries on 8 goroutines: 1 applied, the rest duplicates but %d busy after waiting "+
			"the whole busy timeout; balance 500", patient)
	}
	r.Notef("%s", note)
}

// busyTimeout is the busy timeout correct's DSN sets: how long a delivery
// waits for the write lock before it answers busy.
const busyTimeout = 5 * time.Second

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
	r.WantError(db.Deliver(e, labtest.Delivery{Unchecked: true, Within: 50 * time.Millisecond}), lab.ErrBusy)
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

// CommitWait holds a read transaction on another connection across a
// delivery. In rollback-journal mode the delivery takes the write lock and
// writes, but its COMMIT must wait for the reader, and the reader outlasts
// the busy timeout: the COMMIT fails, the answer is busy, nothing is kept
// (the failed COMMIT rolled back), and once the reader is gone the
// redelivery applies. A handler whose connection keeps a write-ahead log
// instead (journal_mode=WAL) commits past the reader, which never blocks a
// writer there: it answers applied, and the redelivery is a duplicate.
// Both keep the guarantee; what neither may do is answer applied and keep
// nothing, or keep the credit and answer an error that a retry then
// applies again.
func CommitWait(r *labtest.Run) {
	db := r.Open()
	e := credit("evt-10", 500)
	release := db.HoldReadLock()
	first := db.Deliver(e) // Deliver checks that a failed attempt kept nothing
	release()
	if first.Err == nil && first.Outcome == lab.Applied {
		r.WantOutcome(db.Deliver(e), lab.Duplicate)
		r.WantBalance(db, 1, 500)
		r.Notef("a reader held its lock across the delivery: the COMMIT went past it (a write-ahead log); the retry was a duplicate")
		return
	}
	r.WantError(first, lab.ErrBusy)
	r.WantInbox(db, 0)
	r.WantOutcome(db.Deliver(e), lab.Applied)
	r.WantBalance(db, 1, 500)
	r.Notef("a reader held its lock past the busy timeout: the COMMIT answered busy, nothing kept; the retry applied")
}
