package scenarios

import (
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Summary replays the article's demonstration: evt-1 applied, repeated, and
// repeated with another amount; evt-2 failing between INSERT and UPDATE and
// then retried; evt-3 delivered 20 times on 8 goroutines. The article's
// script ends with "OK: balance=1500, inbox=3, applied=1, duplicate=19".
func Summary(r *labtest.Run) {
	db := r.Open()
	r.WantOutcome(db.Deliver(credit("evt-1", 500)), lab.Applied)
	r.WantOutcome(db.Deliver(credit("evt-1", 500)), lab.Duplicate)
	r.WantError(db.Deliver(credit("evt-1", 700)), lab.ErrPayloadConflict)

	db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpUpdate, Table: "accounts"})
	r.WantError(db.Deliver(credit("evt-2", 500)), labtest.ErrInjected)
	r.WantOutcome(db.Deliver(credit("evt-2", 500)), lab.Applied)

	answers := db.Concurrently(spread(copies(credit("evt-3", 500), 20), 8)...)
	applied, duplicate, _ := labtest.Count(answers)
	balance, inbox := db.Balance(1), db.InboxRows()
	if balance != 1500 || inbox != 3 || applied != 1 || duplicate != 19 {
		r.Errorf("Summary = balance=%d, inbox=%d, applied=%d, duplicate=%d, want balance=1500, inbox=3, applied=1, duplicate=19",
			balance, inbox, applied, duplicate)
	}
	r.Notef("OK: balance=%d, inbox=%d, applied=%d, duplicate=%d", balance, inbox, applied, duplicate)
}
