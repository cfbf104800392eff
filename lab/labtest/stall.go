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
// run and written a row. Inside a transaction that row is uncommitted until
// the transaction ends. An INSERT the handler runs outside any transaction
// is a transaction of its own, which commits as the statement ends: the lab
// runs it inside a BEGIN of its own, so that the delivery stops at the last
// instant before that commit, the row written and not yet visible to
// anyone else. Either way, when released, the stalled process loses its
// connection: the lab rolls its transaction back, closes the connection
// under the handler, and the INSERT fails with ErrInjected. Nothing the
// handler does next can keep the row, as nothing could once its process
// was gone.

// stall is one delivery that the driver stops (see HoldDelivery).
type stall struct {
	session string
	reached chan struct{} // closed once its INSERT has run, the row held
	release chan struct{} // closed by the caller of HoldDelivery
	free    func() Answer // releases it and returns its answer (once)

	// Guarded by the DB's mu.
	used    bool   // its statement has been seen: one stall per delivery
	holding bool   // between reached and release
	missed  string // why it did not stall, when it did not
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

// missed records why st did not stop its delivery, for HoldDelivery's
// failure.
func (db *DB) missed(st *stall, why string) {
	db.mu.Lock()
	defer db.mu.Unlock()
	st.missed = why
}

// stallAt stops the session at st once its statement s has run, until the
// caller of HoldDelivery releases it.
func (db *DB) stallAt(st *stall, s *stmt, wrapped bool) {
	text, note := "stalls after its INSERT", "its row written, not committed"
	if wrapped {
		text, note = "stalls before its INSERT commits", "its row written, not yet visible"
	}
	db.run.Transcript.Note(s.Session, text, note)
	db.mu.Lock()
	st.holding = true
	db.mu.Unlock()
	close(st.reached)
	<-st.release
	db.mu.Lock()
	st.holding = false
	db.mu.Unlock()
}

// told logs the error a statement's handler is given instead of its
// result.
func (db *DB) told(s *stmt, err error) {
	db.run.Transcript.Note(s.Session, "the handler is told", "error: "+err.Error())
}

// stalled reports whether session is a stalled delivery, stopped: its
// process is elsewhere, so a call the lab makes meanwhile is not its
// handler's (see blind). db.mu must be held.
func (db *DB) stalled(session string) bool {
	st := db.stalls[session]
	return st != nil && st.holding
}

// HoldDelivery starts a delivery of e, on a session of its own, that
// stalls with the event's inbox row written and not committed, as a
// delivery in flight in another process would (see the top of this file).
// It returns once the row is held. release lets the stalled delivery fail
// (its row is rolled back, nothing of it stays) and returns its answer. A
// stall not yet released when the test ends, or when the database is
// reset for the next case, is released then.
//
// It works on either database: on SQLite the stalled INSERT holds the
// write lock, on PostgreSQL the row. A handler whose delivery of e writes
// no row with an INSERT into inbox cannot be stalled: the delivery runs
// to its end, and the run cannot judge the handler (Run.Neutralf, naming
// what happened instead); release returns its answer.
func (db *DB) HoldDelivery(e lab.Event) (release func() Answer) {
	db.run.tb.Helper()
	st := &stall{session: db.run.nextSession(), reached: make(chan struct{}), release: make(chan struct{})}
	done := make(chan Answer, 1)
	var once sync.Once
	var answer Answer
	st.free = func() Answer {
		once.Do(func() {
			close(st.release)
			answer = <-done
			db.mu.Lock()
			delete(db.stalls, st.session)
			db.mu.Unlock()
		})
		return answer
	}
	db.mu.Lock()
	if db.stalls == nil {
		db.stalls = map[string]*stall{}
	}
	db.stalls[st.session] = st
	db.mu.Unlock()
	// A test that stops before releasing it (a Fatalf) must not leave the
	// stalled connection busy: closing the pool would wait for it forever.
	db.run.tb.Cleanup(func() { st.free() })
	go func() { done <- db.deliver(st.session, e, 0) }()
	select {
	case <-st.reached:
	case a := <-done:
		done <- a // for free
		db.mu.Lock()
		why := st.missed
		db.mu.Unlock()
		if why == "" {
			why = "it ran no INSERT into inbox"
		}
		db.run.neutralf("the delivery the lab was to stall at its INSERT into inbox never stalled: %s; it answered %v", why, a)
		return st.free
	case <-time.After(stuckReal):
		panic(fmt.Sprintf("lab: HoldDelivery(%v): the delivery has not reached its INSERT into inbox in %v", e, stuckReal))
	}
	return st.free
}

// releaseStalls releases every stalled delivery of the database that is
// still held, before it is emptied for the next case.
func (db *DB) releaseStalls() {
	db.mu.Lock()
	var held []*stall
	for _, st := range db.stalls {
		held = append(held, st)
	}
	db.mu.Unlock()
	for _, st := range held {
		st.free()
	}
}

// execStalled runs s, a statement that st stops, on the base connection
// c: inside the handler's transaction if the connection has one, else in a
// BEGIN of the lab's. It logs the statement as run and, if it wrote a row,
// stops; once released, it rolls back, closes the connection (the stalled
// process is gone) and fails the statement with ErrInjected.
func (c *conn) execStalled(ctx context.Context, s *stmt, st *stall, run func([]driver.NamedValue) (driver.Result, error)) (driver.Result, error) {
	hooks := c.c.hooks
	wrapped := !c.inTx
	base := c.base.(driver.ExecerContext)
	if wrapped {
		if _, err := base.ExecContext(ctx, "BEGIN", nil); err != nil {
			hooks.missed(st, "the lab's BEGIN around its INSERT failed: "+err.Error())
			return nil, fmt.Errorf("lab: a BEGIN around the stalled statement: %w", err)
		}
	}
	res, err := run(s.Args)
	r := &stmtResult{Err: err, Rows: -1, InTx: true}
	if err == nil {
		r.RowsAffected, _ = res.RowsAffected()
	}
	if hookErr := hooks.after(ctx, s, r); hookErr != nil && err == nil {
		err = hookErr
	}
	if err != nil || r.RowsAffected != 1 {
		if err != nil {
			hooks.missed(st, "its INSERT into inbox failed: "+err.Error())
		} else {
			hooks.missed(st, fmt.Sprintf("its INSERT into inbox wrote %d rows, so it held none", r.RowsAffected))
		}
		if wrapped {
			// Not stalled: the statement ends as it would have on its own,
			// committed if it succeeded.
			end := "COMMIT"
			if err != nil {
				end = "ROLLBACK"
			}
			if _, endErr := base.ExecContext(context.WithoutCancel(ctx), end, nil); endErr != nil && err == nil {
				err = fmt.Errorf("lab: the %s around the statement that did not stall: %w", end, endErr)
			}
		}
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	hooks.stallAt(st, s, wrapped)
	// The stalled process is gone: the server rolls back what it had open.
	// The ROLLBACK is sent first so that the row is gone before the next
	// delivery looks for it (a server notices a closed connection only in
	// its own time); then the handler is left with a connection that fails
	// whatever it does next (see conn.lost).
	_, rbErr := base.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil)
	c.lost = true
	c.base.Close()
	if rbErr != nil {
		return nil, fmt.Errorf("lab: the ROLLBACK of the stalled delivery: %w", rbErr)
	}
	err = fmt.Errorf("%w: the stalled delivery lost its connection after %s", ErrInjected, s)
	hooks.told(s, err)
	return nil, err
}
