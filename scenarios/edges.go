package scenarios

import (
	"database/sql/driver"
	"strings"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// SchemaGuards stands for bugs between validation and the database, one
// per rule that the schema alone enforces: the INSERT into the inbox
// receives, instead of the event's values, an amount over the cap, a
// fractional amount, an empty source, a NULL source, an oversized event id
// or a missing account (rewrites injected at the driver). Each must be
// refused by the schema and answered with its kind — invalid event, or
// unknown account for the foreign key — leaving nothing behind. A schema
// without one of its CHECKs, NOT NULLs, STRICT or REFERENCES, or a
// connection without foreign keys, lets the row in.
func SchemaGuards(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2})
	cases := []struct {
		name     string
		old, new any
		kind     error
	}{
		{"amount over the cap", int64(500), int64(lab.MaxAmount + 1), lab.ErrInvalidEvent},
		{"fractional amount", int64(500), 2.5, lab.ErrInvalidEvent},
		{"empty source", "provider-a", "", lab.ErrInvalidEvent},
		{"NULL source", "provider-a", nil, lab.ErrInvalidEvent},
		{"oversized event_id", "evt-guard", strings.Repeat("x", lab.MaxKeyBytes+1), lab.ErrInvalidEvent},
		{"missing account", int64(2), int64(99), lab.ErrUnknownAccount},
	}
	for _, c := range cases {
		e := lab.Event{Source: "provider-a", EventID: "evt-guard", AccountID: 2, Amount: 500}
		db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpInsert, Table: "inbox", Rewrite: replaceArg(c.old, c.new)})
		if !r.WantError(db.Deliver(e), c.kind) {
			r.Errorf("case %q: the schema must refuse the row", c.name)
		}
		db.Lift()
	}
	r.WantInbox(db, 0)
	r.WantBalance(db, 2, 0)
	r.Notef("%d rows only the schema could refuse: each refused with its kind, nothing written", len(cases))
}

// replaceArg returns a rewrite that replaces every argument equal to old
// with new.
func replaceArg(old, new any) func(args []driver.NamedValue) {
	return func(args []driver.NamedValue) {
		for i := range args {
			if args[i].Value == old {
				args[i].Value = new
			}
		}
	}
}

// Edges delivers the events that sit exactly on the limits, which must
// apply, and the first ones past them, which must not: an amount of
// exactly MaxAmount, keys of exactly MaxKeyBytes, a credit that lands a
// balance exactly on MaxBalance, and one unit more; and a repeat for the
// account at its cap, which is a duplicate. A limit moved by one, in the
// validation or in the schema, fails here.
func Edges(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2, Balance: lab.MaxBalance - lab.MaxAmount})
	longest := strings.Repeat("k", lab.MaxKeyBytes)
	r.WantOutcome(db.Deliver(credit("evt-max", lab.MaxAmount)), lab.Applied)
	r.WantOutcome(db.Deliver(lab.Event{Source: longest, EventID: longest, AccountID: 1, Amount: 1}), lab.Applied)
	toCap := lab.Event{Source: "provider-a", EventID: "evt-to-cap", AccountID: 2, Amount: lab.MaxAmount}
	r.WantOutcome(db.Deliver(toCap), lab.Applied)
	r.WantBalance(db, 2, lab.MaxBalance)
	// A repeat for an account at its cap is still a duplicate: a handler
	// that credits before it checks would hit the cap and answer an error.
	r.WantOutcome(db.Deliver(toCap), lab.Duplicate)
	r.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-past-cap", AccountID: 2, Amount: 1}), lab.ErrInvalidEvent)
	r.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-over", AccountID: 1, Amount: lab.MaxAmount + 1}), lab.ErrInvalidEvent)
	r.WantBalance(db, 1, lab.MaxAmount+1)
	r.WantBalance(db, 2, lab.MaxBalance)
	r.WantInbox(db, 3)
	r.Notef("amount %d, %d-byte keys and a balance landing on %d applied; one unit past each refused",
		lab.MaxAmount, lab.MaxKeyBytes, lab.MaxBalance)
}
