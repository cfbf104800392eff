package scenarios

import (
	"database/sql/driver"
	"strings"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Rollback injects a failure between the inbox INSERT and the credit — the
// article's own experiment — and then redelivers. The failed attempt must
// leave neither the credit nor the mark that would make the retry a
// "duplicate"; the retry applies. The failure strikes the UPDATE of
// accounts: a handler that runs none (its credit is a trigger on the
// inbox) cannot be judged here, and the cell says so (neutral) instead of
// holding its first answer, applied, against it.
func Rollback(r *labtest.Run) {
	db := r.Open()
	e := credit("evt-2", 500)
	db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpUpdate, Table: "accounts"})
	r.WantError(db.Deliver(e), labtest.ErrInjected)
	r.WantInbox(db, 0)
	r.WantOutcome(db.Deliver(e), lab.Applied)
	r.WantBalance(db, 1, 500)
	r.Notef("failure before the credit: nothing kept; the retry applied; balance 500")
}

// UnknownAccount delivers an event for an account that does not exist. The
// foreign key refuses the inbox row: an error, and neither the inbox nor any
// balance changes.
func UnknownAccount(r *labtest.Run) {
	db := r.Open()
	e := lab.Event{Source: "provider-a", EventID: "evt-9", AccountID: 99, Amount: 500}
	r.WantError(db.Deliver(e), lab.ErrUnknownAccount)
	r.WantInbox(db, 0)
	r.WantBalance(db, 1, 0)
	r.Notef("account 99: unknown account; inbox empty")
}

// InvalidInput delivers events that must be refused: empty, oversized,
// non-UTF-8 and NUL-carrying keys, non-positive ids, zero, negative and huge
// amounts, and a credit that would push a balance past its cap. Each gets an
// error of the invalid kind and writes nothing (Deliver checks that the
// database is unchanged after every failed attempt).
func InvalidInput(r *labtest.Run) {
	const nearCap = lab.MaxBalance - 10
	db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2, Balance: nearCap})
	long := strings.Repeat("x", lab.MaxKeyBytes+1)
	ok := credit("evt-ok", 500)
	cases := []struct {
		name string
		edit func(e *lab.Event)
	}{
		{"empty source", func(e *lab.Event) { e.Source = "" }},
		{"empty event_id", func(e *lab.Event) { e.EventID = "" }},
		{"oversized source", func(e *lab.Event) { e.Source = long }},
		{"oversized event_id", func(e *lab.Event) { e.EventID = long }},
		{"non-UTF-8 source", func(e *lab.Event) { e.Source = "provider-\xff" }},
		{"NUL in event_id", func(e *lab.Event) { e.EventID = "evt\x00-1" }},
		{"account 0", func(e *lab.Event) { e.AccountID = 0 }},
		{"negative account", func(e *lab.Event) { e.AccountID = -1 }},
		{"amount 0", func(e *lab.Event) { e.Amount = 0 }},
		{"negative amount", func(e *lab.Event) { e.Amount = -500 }},
		{"amount over the cap", func(e *lab.Event) { e.Amount = lab.MaxAmount + 1 }},
		{"largest int64 amount", func(e *lab.Event) { e.Amount = 1<<63 - 1 }},
		{"balance past its cap", func(e *lab.Event) { e.AccountID = 2; e.Amount = 100 }},
	}
	for _, c := range cases {
		e := ok
		e.EventID = "evt-" + strings.ReplaceAll(c.name, " ", "-")
		c.edit(&e)
		if !r.WantError(db.Deliver(e), lab.ErrInvalidEvent) {
			r.Errorf("case %q: the event must be refused", c.name)
		}
	}
	r.WantInbox(db, 0)
	r.Notef("%d bad events: each an invalid-event error, nothing written", len(cases))
}

// DatabaseRefusal stands for a bug between validation and the database:
// the INSERT into the inbox receives amount 0 where the event said 500 (a
// rewrite injected at the driver). The schema's CHECK refuses the row. That
// must surface as an error of the invalid kind: a refusal is not a repeat,
// and must not be swallowed as one. The rewrite looks for the amount as
// the int64 500; a handler that binds it as another Go type (a string; on
// PostgreSQL, whose driver passes values through, an int32) leaves it
// nothing to rewrite, and the cell is neutral: its row was never refused.
func DatabaseRefusal(r *labtest.Run) {
	db := r.Open()
	db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpInsert, Table: "inbox", Rewrite: zeroAmount(500)})
	r.WantError(db.Deliver(credit("evt-1", 500)), lab.ErrInvalidEvent)
	r.WantInbox(db, 0)
	r.Notef("amount rewritten to 0 at the INSERT: CHECK refused it, reported as invalid event")
}

// zeroAmount returns a rewrite that replaces the argument amount by 0. It
// finds the amount by its value, so it rewrites only an argument it can
// tell apart: when another argument has the same value (account 1 with
// amount 1), it cannot know which one is the amount, and rewrites nothing.
func zeroAmount(amount int64) func(args []driver.NamedValue) {
	return func(args []driver.NamedValue) {
		at := -1
		for i := range args {
			if args[i].Value == any(amount) {
				if at >= 0 {
					return
				}
				at = i
			}
		}
		if at >= 0 {
			args[at].Value = int64(0)
		}
	}
}
