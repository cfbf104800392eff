package checks

import (
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// SourceScope is the check of the sourcescope exercise: the whole matrix
// held to the correct standard, SourceScope first, and SecondSourceRepeat.
var SourceScope = Handler([]string{"SourceScope", "Duplicate", "PayloadConflict"}, SecondSourceRepeat)

// SecondSourceRepeat is the sourcescope exercise's own scenario: the key
// lives in three places (the schema, the ON CONFLICT target, the lookup of
// the stored payload), and a fix of two of them passes SourceScope. Here
// evt-1 comes from both providers with different payloads, and each is
// then repeated: each repeat must be compared with its own source's row.
var SecondSourceRepeat = labtest.Scenario{
	Name:  "SecondSourceRepeat",
	Shows: "evt-1 from provider-a and from provider-b, with different payloads, each repeated: two credits, two duplicates",
	Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2})
		a := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		b := lab.Event{Source: "provider-b", EventID: "evt-1", AccountID: 2, Amount: 300}
		r.WantOutcome(db.Deliver(a), lab.Applied)
		r.WantOutcome(db.Deliver(b), lab.Applied)
		r.WantOutcome(db.Deliver(b), lab.Duplicate)
		r.WantOutcome(db.Deliver(a), lab.Duplicate)
		r.WantBalance(db, 1, 500)
		r.WantBalance(db, 2, 300)
	},
}
