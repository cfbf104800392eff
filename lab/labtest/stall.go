package labtest

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
	"time"

	"idemlab/lab"
)

// A stalled delivery is another delivery of the same event, in flight
// elsewhere: it has written the event's inbox row and not committed it. It
// is what LockTimeout on PostgreSQL needs in the other connection, and the
// lab makes it out of the variant's own handler rather than out of a
// statement of the lab's: an INSERT written by the lab would have to know
// every variant's inbox (naive/contenthash keys it on a digest of the
// content, which the lab cannot compute), and would hold a row the variant
// itself might never hold.
//
// The driver stops the delivery right after its first INSERT into inbox has
// run. Inside a transaction that row is uncommitted until the transaction
// ends. An INSERT the handler runs outside any transaction is a
// transaction of its own, which commits as the statement ends: the lab runs
// it inside a BEGIN of its own, so that the delivery stops at the last
// instant before that commit, the row written and not yet visible to
// anyone else. Either way, when released, the statement fails with
// ErrInjected and the row goes (the lab's ROLLBACK, or the handler's once it
// sees the error), as if the stalled process had lost its connection.

// stall is one delivery that the driver stops (see HoldDelivery).
type stall struct {
	session string
	reached chan struct{} // closed once its INSERT has run, the row held
	release chan struct{} // closed by the caller of HoldDelivery
	used    bool          // it has stopped its statement (one per stall)
}

// stallFor returns the stall that stops s, or nil: the first INSERT into
// inbox of the stalled session.
func (db *DB) stallFor(s *stmt) *stall {
	db.mu.Lock()
	defer db.mu.Unlock()
	st := db.stalls[s.Session]
	if st == nil || st.used || s.Op != OpInsert || s.Table != "inbox" {
		return nil
	}
	st.used = true
	return st
}

// stallAt stops the session at st once its statement s has run, until the
// caller of HoldDelivery releases it, and returns the error its statement
// then fails with.
func (db *DB) stallAt(st *stall, s *stmt, wrapped bool) error {
	text, note := "stalls after its INSERT", "its row written, not committed"
	if wrapped {
		text, note = "stalls before its INSERT commits", "its row written, not yet visible"
	}
	db.run.Transcript.Note(s.Session, text, note)
	close(st.reached)
	<-st.release
	err := fmt.Errorf("%w: the stalled delivery lost its connection after %s", ErrInjected, s)
	db.run.Transcript.Note(s.Session, "the handler is told", "error: "+err.Error())
	return err
}

// HoldDelivery starts a delivery of e, on a session of its own, that
// stalls with the event's inbox row written and not committed, as a
// delivery in flight in another process would (see the top of this file).
// It returns once the row is held. release lets the stalled delivery fail
// (its row is rolled back, nothing of it stays) and returns its answer.
//
// A handler that runs no INSERT into inbox for e cannot be stalled: the
// test fails, naming what the delivery answered instead.
func (db *DB) HoldDelivery(e lab.Event) (release func() Answer) {
	db.run.tb.Helper()
	st := &stall{session: db.run.nextSession(), reached: make(chan struct{}), release: make(chan struct{})}
	db.mu.Lock()
	if db.stalls == nil {
		db.stalls = map[string]*stall{}
	}
	db.stalls[st.session] = st
	db.mu.Unlock()
	done := make(chan Answer, 1)
	go func() { done <- db.deliver(st.session, e, 0) }()
	select {
	case <-st.reached:
	case a := <-done:
		db.run.tb.Fatalf("HoldDelivery(%v): the delivery answered %v without an INSERT into inbox to stall at", e, a)
	case <-time.After(stuckReal):
		panic(fmt.Sprintf("lab: HoldDelivery(%v): the delivery has not reached its INSERT into inbox in %v", e, stuckReal))
	}
	var once sync.Once
	var a Answer
	release = func() Answer {
		once.Do(func() {
			close(st.release)
			a = <-done
			db.mu.Lock()
			delete(db.stalls, st.session)
			db.mu.Unlock()
		})
		return a
	}
	// A test that stops before releasing it (a Fatalf) must not leave the
	// stalled connection busy: closing the pool would wait for it forever.
	db.run.tb.Cleanup(func() { release() })
	return release
}

// execStalled runs s, a statement that st stops, on the base connection
// c: inside the handler's transaction if the connection has one, else in a
// BEGIN of the lab's that is rolled back once released. It logs the
// statement as run, stops, and returns the failure the handler sees.
func (c *conn) execStalled(ctx context.Context, s *stmt, st *stall, run func([]driver.NamedValue) (driver.Result, error)) error {
	wrapped := !c.inTx
	base := c.base.(driver.ExecerContext)
	if wrapped {
		if _, err := base.ExecContext(ctx, "BEGIN", nil); err != nil {
			return fmt.Errorf("lab: a BEGIN around the stalled statement: %w", err)
		}
	}
	res, err := run(s.Args)
	r := &stmtResult{Err: err, Rows: -1, InTx: true}
	if err == nil {
		r.RowsAffected, _ = res.RowsAffected()
	}
	if hookErr := c.c.hooks.after(ctx, s, r); hookErr != nil {
		err = hookErr
	}
	if err == nil {
		err = c.c.hooks.stallAt(st, s, wrapped)
	}
	if wrapped {
		if _, rbErr := base.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil); rbErr != nil {
			return fmt.Errorf("lab: the ROLLBACK after the stalled statement: %w (it failed with %w)", rbErr, err)
		}
	}
	return err
}
