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
// The other data is also drawn at the edges where a lossy comparison sees
// none: an account that int32 reads as 1 (2^32+1), an amount that float32
// reads as the first (10^9 after 999,999,999), and an account that float64
// reads as the first (2^53+1 after 2^53).
func PayloadConflict(r *labtest.Run) {
	const big = int64(1) << 53
	// Every account exists, so that the conflict is the only thing wrong
	// with each twin (a handler may check the account first).
	db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2}, labtest.Account{ID: 1<<32 + 1},
		labtest.Account{ID: big}, labtest.Account{ID: big + 1})
	e := credit("evt-1", 500)
	r.WantOutcome(db.Deliver(e), lab.Applied)

	otherAmount := e
	otherAmount.Amount = 700
	r.WantError(db.Deliver(otherAmount), lab.ErrPayloadConflict)

	otherAccount := e
	otherAccount.AccountID = 2
	r.WantError(db.Deliver(otherAccount), lab.ErrPayloadConflict)

	int32Twin := e
	int32Twin.AccountID = 1<<32 + 1
	r.WantError(db.Deliver(int32Twin), lab.ErrPayloadConflict)

	nearCap := credit("evt-near-cap", 999_999_999)
	r.WantOutcome(db.Deliver(nearCap), lab.Applied)
	float32Twin := nearCap
	float32Twin.Amount = lab.MaxAmount
	r.WantError(db.Deliver(float32Twin), lab.ErrPayloadConflict)

	bigAccount := lab.Event{Source: "provider-a", EventID: "evt-big-account", AccountID: big, Amount: 500}
	r.WantOutcome(db.Deliver(bigAccount), lab.Applied)
	float64Twin := bigAccount
	float64Twin.AccountID = big + 1
	r.WantError(db.Deliver(float64Twin), lab.ErrPayloadConflict)

	r.WantBalance(db, 1, 500+999_999_999)
	r.WantBalance(db, 2, 0)
	r.WantBalance(db, 1<<32+1, 0)
	r.WantBalance(db, big, 500)
	r.WantBalance(db, big+1, 0)
	r.Notef("another amount, another account, and twins a lossy comparison would confuse (2^32+1 for 1, 10^9 for 999,999,999, 2^53+1 for 2^53): each a payload conflict; nothing moved twice")
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
