package scenarios

import (
	"time"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// PoolOfOne runs the handler the way correct's doc says to run it on
// SQLite: a pool of one connection, so that deliveries queue in
// database/sql instead of polling SQLite's lock. A handler that needs only
// the connection its delivery holds applies, then answers the repeat
// duplicate, as on any pool. One that needs a
// second connection while its transaction holds the only one waits for
// itself: each delivery here has a caller that gives up after 30 s (of the
// bubble's clock), so it answers busy then instead of never.
func PoolOfOne(r *labtest.Run) {
	db := r.Open()
	db.Pool().SetMaxOpenConns(1)
	e := credit("evt-11", 500)
	for _, c := range []struct {
		e    lab.Event
		want lab.Outcome
	}{{e, lab.Applied}, {e, lab.Duplicate}} {
		r.WantOutcome(db.Deliver(c.e, labtest.Delivery{Unchecked: true, Within: patience}), c.want)
	}
	r.WantBalance(db, 1, 500)
	r.WantInbox(db, 1)
	r.Notef("a pool of one connection: applied, then duplicate; balance 500")
}

// patience is how long PoolOfOne's caller waits for an answer: far longer
// than the busy timeout, so only a delivery that waits for itself reaches it.
const patience = 30 * time.Second
