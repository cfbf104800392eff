package scenarios

import (
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Duplicate delivers the same event twice. The first delivery applies it,
// the second is recognised as a repeat: the balance moves once.
func Duplicate(r *labtest.Run) {
	db := r.Open()
	e := credit("evt-1", 500)
	r.WantOutcome(db.Deliver(e), lab.Applied)
	r.WantOutcome(db.Deliver(e), lab.Duplicate)
	r.WantBalance(db, 1, 500)
	r.WantInbox(db, 1)
	r.Notef("applied, then duplicate; balance 500")
}

// PayloadConflict delivers an event, then the same key with another amount,
// then with another account. A repeat must carry the same data; anything
// else is a broken contract, answered with an error, and changes nothing.
func PayloadConflict(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2})
	e := credit("evt-1", 500)
	r.WantOutcome(db.Deliver(e), lab.Applied)

	otherAmount := e
	otherAmount.Amount = 700
	r.WantError(db.Deliver(otherAmount), lab.ErrPayloadConflict)

	otherAccount := e
	otherAccount.AccountID = 2
	r.WantError(db.Deliver(otherAccount), lab.ErrPayloadConflict)

	r.WantBalance(db, 1, 500)
	r.WantBalance(db, 2, 0)
	r.Notef("amount 700 and account 2 under evt-1: both payload conflicts; balances 500 and 0")
}

// SourceScope delivers evt-1 from provider-a and evt-1 from provider-b, the
// second with a payload of its own, and then repeats each. An event id is
// unique only within its source: these are two events, each applied once,
// and the repeat of provider-b's is compared with provider-b's stored row,
// not provider-a's.
func SourceScope(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2})
	a := credit("evt-1", 500)
	b := lab.Event{Source: "provider-b", EventID: "evt-1", AccountID: 2, Amount: 700}
	r.WantOutcome(db.Deliver(a), lab.Applied)
	r.WantOutcome(db.Deliver(b), lab.Applied)
	r.WantOutcome(db.Deliver(b), lab.Duplicate)
	r.WantOutcome(db.Deliver(a), lab.Duplicate)
	r.WantBalance(db, 1, 500)
	r.WantBalance(db, 2, 700)
	r.Notef("provider-a/evt-1 and provider-b/evt-1 both applied, each repeat a duplicate; balances 500/700")
}

// DistinctEvents delivers two different events that happen to carry the
// same account and amount. Equal content does not make them one event: both
// credit.
func DistinctEvents(r *labtest.Run) {
	db := r.Open()
	r.WantOutcome(db.Deliver(credit("evt-1", 500)), lab.Applied)
	r.WantOutcome(db.Deliver(credit("evt-2", 500)), lab.Applied)
	r.WantBalance(db, 1, 1000)
	r.Notef("evt-1 and evt-2, both 500 to account 1: both applied; balance 1000")
}
