package checks

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"idemlab/exercises/retention"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// t0 is when the retention check's first event arrives.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// retentionVariant is s's handler as the lab sees one, with a clock, so
// that the whole matrix runs on it.
func retentionVariant(s retention.Service) lab.Variant {
	return retentionAt(s, func() time.Time { return t0 })
}

// retentionAt is s's handler on a clock.
func retentionAt(s retention.Service, clock func() time.Time) lab.Variant {
	return lab.Variant{Name: s.Name, Mistake: "an exercise", Schema: s.Schema, DSN: s.DSN,
		New: func(db *sql.DB) lab.Processor { return clocked{s.New(db), clock} }}
}

// clocked adapts a retention.Processor to lab.Processor: each event is
// delivered at clock's time.
type clocked struct {
	p     retention.Processor
	clock func() time.Time
}

func (c clocked) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	return c.p.Process(ctx, e, c.clock())
}

// Retention is the check of the retention exercise: PurgeBoundaries, then
// the whole matrix held to the correct standard.
func Retention(c *Checker, s retention.Service) {
	now := t0
	c.Scenario(purgeBoundaries(s, &now), retentionAt(s, func() time.Time { return now }))
	c.Matrix(retentionVariant(s), nil)
}

// purgeBoundaries: an event first delivered at t0 may be redelivered up to
// t0 + RedeliveryWindow. A purge at each side of each boundary — just
// after the delivery, an hour later, a second before the window closes, as
// it closes, a second after — must keep the row while a redelivery is
// still possible (the redelivery at the window's end is a duplicate), and
// delete it once it is not. Events of different ages are purged together,
// so that a purge that keeps or deletes them all is seen too.
func purgeBoundaries(s retention.Service, now *time.Time) labtest.Scenario {
	w := retention.RedeliveryWindow
	return labtest.Scenario{
		Name:  "PurgeBoundaries",
		Shows: fmt.Sprintf("a purge a second before, at and after the end of an event's %v redelivery window, and long before it: the row stays exactly while the event can come again", w),
		Run: func(r *labtest.Run) {
			ctx := context.Background()
			for _, at := range []time.Duration{0, time.Second, time.Hour, 24 * time.Hour, w - time.Second, w, w + time.Second, w + time.Hour, 2 * w} {
				r.Case(fmt.Sprintf("purge at t0+%v", at), func(c *labtest.Run) {
					db := c.Open()
					// evt-1 arrives at t0, evt-2 an hour later: at t0+w+1s
					// the first may go and the second must stay.
					old := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
					young := lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 300}
					*now = t0
					c.WantOutcome(db.Deliver(old), lab.Applied)
					*now = t0.Add(time.Hour)
					c.WantOutcome(db.Deliver(young), lab.Applied)
					n, err := s.Purge(ctx, db.Pool(), t0.Add(at))
					if err != nil {
						c.Errorf("Purge(t0+%v): %v", at, err)
						return
					}
					want := 0
					for _, e := range []struct {
						ev      lab.Event
						arrived time.Duration
					}{{old, 0}, {young, time.Hour}} {
						closed := at > e.arrived+w // the window has closed at the purge
						if closed {
							want++
						}
						kept := keeps(db, e.ev)
						switch {
						case kept && closed:
							c.Errorf("Purge(t0+%v) kept %s, first delivered at t0+%v: its window closed at t0+%v, and history past it must go", at, e.ev.Key(), e.arrived, e.arrived+w)
						case !kept && !closed:
							// The provider may still redeliver it, as late
							// as the window's end: it must be a duplicate.
							redelivery := t0.Add(max(at, e.arrived+w))
							*now = redelivery
							a := db.Deliver(e.ev)
							c.Errorf("Purge(t0+%v) deleted %s, first delivered at t0+%v: redelivered at t0+%v, within its window, it was %v, want duplicate",
								at, e.ev.Key(), e.arrived, redelivery.Sub(t0), a)
						}
					}
					if n != int64(want) {
						c.Errorf("Purge(t0+%v) = %d rows deleted, want %d", at, n, want)
					}
					// The lab's invariants tie every balance to the inbox
					// rows that explain it; after a purge they hold for
					// what the database still remembers. PurgeInbox says so
					// (it empties the inbox and takes the balances as the
					// new baseline).
					db.PurgeInbox()
				})
			}
		},
	}
}

// keeps reports whether the inbox still holds e.
func keeps(db *labtest.DB, e lab.Event) bool {
	_, inbox := db.State()
	for _, x := range inbox {
		if x.Key() == e.Key() {
			return true
		}
	}
	return false
}
