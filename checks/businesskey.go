package checks

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"testing"
	"testing/synctest"

	"idemlab/exercises/businesskey"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// The matrix's scenarios are about a ledger (accounts and their balances,
// every inbox row backed by its credit); this exercise is about orders, and
// its solution records two events for one activation on purpose, so the
// matrix does not apply. The check runs the lab's engine all the same — its
// statement-hooking driver, its scheduler, its faults and transcripts —
// through an adapter: account n stands for order-n (the lab seeds
// accounts, a trigger opens their orders), and an event's payload is the
// payment. The ledger invariants are not checked; the check reads orders
// and inbox itself.

// orderVariant is s as the lab's engine sees a handler.
func orderVariant(s businesskey.Service) lab.Variant {
	return lab.Variant{Name: s.Name, Mistake: "an exercise", DSN: s.DSN,
		Schema: s.Schema + `;
CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL DEFAULT 0);
CREATE TRIGGER open_order AFTER INSERT ON accounts BEGIN
	INSERT INTO orders (id) VALUES ('order-' || NEW.id);
END;`,
		New: func(db *sql.DB) lab.Processor { return paying{s.New(db)} }}
}

// paying delivers a lab event as the payment of order-<account>.
type paying struct{ p businesskey.Processor }

func (p paying) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	return p.p.Process(ctx, payment(e))
}

func payment(e lab.Event) businesskey.Payment {
	return businesskey.Payment{Source: e.Source, EventID: e.EventID, OrderID: fmt.Sprintf("order-%d", e.AccountID), Amount: e.Amount}
}

// pay is a payment of order-<order> as the lab delivers it.
func pay(source, eventID string, order, amount int64) lab.Event {
	return lab.Event{Source: source, EventID: eventID, AccountID: order, Amount: amount}
}

// BusinessKey is the check of the businesskey exercise: OneActivation (a
// story told in order), OrderRace (the two events of one order in every
// interleaving) and OrderFaults (an error at every statement of the first
// event), each asking for one activation per order and every event
// recorded as seen.
func BusinessKey(c *Checker, s businesskey.Service) {
	v := orderVariant(s)
	for _, g := range []orderGuarantee{oneActivation, orderRace, orderFaults} {
		if c.Done() {
			return
		}
		var lines []string
		var transcript string
		synctest.Test(c.T, func(t *testing.T) { lines, transcript = g.run(labtest.NewRun(t, v)) })
		if len(lines) > 0 {
			c.Fail(Failure{Guarantee: g.name, Shows: g.shows, Lines: lines, Transcript: transcript})
		}
	}
}

// An orderGuarantee is one of the businesskey check's stories: run tells
// it and returns its failures and transcript.
type orderGuarantee struct {
	name, shows string
	run         func(r *labtest.Run) (failures []string, transcript string)
}

var oneActivation = orderGuarantee{
	name:  "OneActivation",
	shows: "order-42 paid as evt-1, as evt-2, evt-1 again, as evt-1 of provider-b; order-43 paid: each order activated once, every event recorded",
	run: func(r *labtest.Run) ([]string, string) {
		db := r.Open(labtest.Account{ID: 42}, labtest.Account{ID: 43})
		defer db.Pool().Close()
		for _, step := range []struct {
			e    lab.Event
			want lab.Outcome
		}{
			{pay("provider-a", "evt-1", 42, 500), lab.Applied},
			{pay("provider-a", "evt-2", 42, 500), lab.Duplicate},
			{pay("provider-a", "evt-1", 42, 500), lab.Duplicate},
			{pay("provider-b", "evt-1", 42, 500), lab.Duplicate},
			{pay("provider-a", "evt-3", 43, 700), lab.Applied},
		} {
			if a := db.Attempt(step.e); a.Err != nil || a.Outcome != step.want {
				r.Errorf("%s: Process(%+v) = %v, want %v", a.Session, payment(step.e), a, step.want)
			}
		}
		wantOrders(r, db, map[int64]int{42: 1, 43: 1},
			pay("provider-a", "evt-1", 42, 500), pay("provider-a", "evt-2", 42, 500),
			pay("provider-b", "evt-1", 42, 500), pay("provider-a", "evt-3", 43, 700))
		return r.Failures(), r.Transcript.String()
	},
}

var orderRace = orderGuarantee{
	name:  "OrderRace",
	shows: "order-42 paid as evt-1 and as evt-2 at once, every interleaving: one activation, one applied and one duplicate, both events recorded",
	run: func(r *labtest.Run) ([]string, string) {
		e1, e2 := pay("provider-a", "evt-1", 42, 500), pay("provider-a", "evt-2", 42, 500)
		var failed []string
		var first, total int
		var transcript string
		var explore func(plan []string)
		explore = func(plan []string) {
			total++
			c := r.Child()
			db := c.Open(labtest.Account{ID: 42})
			var parked [][]string
			var chosen []string
			answers, schedule := db.Interleave(func(step int, p []string, robin string) string {
				name := robin
				if step < len(plan) {
					name = plan[step]
				}
				parked = append(parked, slices.Clone(p))
				chosen = append(chosen, name)
				return name
			}, []lab.Event{e1}, []lab.Event{e2})
			if applied, duplicate, errs := labtest.Count(answers); applied != 1 || duplicate != 1 || errs != 0 {
				c.Errorf("answers = %v, want one applied and one duplicate", answers)
			}
			wantOrders(c, db, map[int64]int{42: 1}, e1, e2)
			db.Pool().Close()
			if c.Failed() {
				if len(failed) == 0 {
					first = len(chosen)
					transcript = c.Transcript.String()
				}
				if len(chosen) < first {
					first, transcript = len(chosen), c.Transcript.String()
				}
				failed = append(failed, schedule+": "+c.Failures()[0])
			}
			for i := len(plan); i < len(chosen); i++ {
				for _, alt := range parked[i] {
					if alt != chosen[i] {
						explore(append(slices.Clone(chosen[:i]), alt))
					}
				}
			}
		}
		explore(nil)
		if len(failed) == 0 {
			return nil, ""
		}
		return append([]string{fmt.Sprintf("%d of %d interleavings break it; the first, %s", len(failed), total, failed[0])}, failed[1:]...), transcript
	},
}

var orderFaults = orderGuarantee{
	name:  "OrderFaults",
	shows: "an error before or after each statement of evt-1's delivery, then evt-1 retried and evt-2 delivered: order-42 activated once, both events recorded",
	run: func(r *labtest.Run) ([]string, string) {
		e1, e2 := pay("provider-a", "evt-1", 42, 500), pay("provider-a", "evt-2", 42, 500)
		var lines []string
		transcript := ""
		for k := 1; ; k++ {
			fired := false
			for _, when := range []labtest.When{labtest.Before, labtest.After} {
				c := r.Child()
				db := c.Open(labtest.Account{ID: 42})
				f := db.Inject(labtest.Fault{When: when, N: k})
				a := db.Attempt(e1)
				fired = fired || f.Fired() > 0
				db.Lift()
				if a.Err != nil {
					if a = db.Attempt(e1); a.Err != nil {
						c.Errorf("%s: the retry of %+v = %v, want applied or duplicate", a.Session, payment(e1), a)
					}
				}
				if a := db.Attempt(e2); a.Err != nil || a.Outcome != lab.Duplicate {
					c.Errorf("%s: Process(%+v) = %v, want duplicate", a.Session, payment(e2), a)
				}
				wantOrders(c, db, map[int64]int{42: 1}, e1, e2)
				db.Pool().Close()
				for _, l := range c.Failures() {
					lines = append(lines, fmt.Sprintf("fault %s statement %d: %s", when, k, l))
				}
				if c.Failed() && transcript == "" {
					transcript = c.Transcript.String()
				}
			}
			if !fired {
				return lines, transcript
			}
		}
	},
}

// wantOrders reports a failure unless each order was activated as often as
// want says, and the inbox records every event of seen.
func wantOrders(r *labtest.Run, db *labtest.DB, want map[int64]int, seen ...lab.Event) {
	for _, id := range slices.Sorted(maps.Keys(want)) {
		order := fmt.Sprintf("order-%d", id)
		var got int
		if err := db.Pool().QueryRow(`SELECT activations FROM orders WHERE id = $1`, order).Scan(&got); err != nil || got != want[id] {
			r.Errorf("activations of %s = %d (%v), want %d", order, got, err, want[id])
		}
	}
	for _, e := range seen {
		var n int
		if err := db.Pool().QueryRow(`SELECT count(*) FROM inbox WHERE source = $1 AND event_id = $2`, e.Source, e.EventID).Scan(&n); err != nil || n != 1 {
			r.Errorf("inbox rows for %s = %d (%v), want 1: every event is recorded as seen, also one whose operation was done before", e.Key(), n, err)
		}
	}
}
