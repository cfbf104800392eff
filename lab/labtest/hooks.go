package labtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// What the hooking driver asks of a database before and after each step
// of a session: park it for the scheduler, apply a fault, refuse a call
// without the delivery's context, and keep track of open transactions.

// before is called by the driver before each step of a session: it numbers
// the step, parks it if the scheduler runs this session, and applies a fault
// that matches it.
func (db *DB) before(ctx context.Context, s *stmt) error {
	db.run.cell.step()
	if db.run.cell.isStopped() {
		return errStopped
	}
	db.mu.Lock()
	if db.dead[s.Session] {
		db.mu.Unlock()
		return errKilled
	}
	db.steps[s.Session]++
	s.N = db.steps[s.Session]
	sched := db.sched
	db.mu.Unlock()
	if s.N > sessionStepLimit {
		db.run.cell.loops(s.Session)
		return errLooping
	}

	if sched != nil {
		sched.park(s)
		if db.run.cell.isStopped() {
			return errStopped
		}
	}

	f := db.fault(Before, s)
	if f == nil {
		return nil
	}
	if f.crash {
		return db.die(s, Before)
	}
	if f.Panic {
		p := f.panicking(s)
		db.run.Transcript.step(s, &stmtResult{Err: p, Rows: -1, NotRun: true})
		panic(p)
	}
	if f.Cancel {
		db.cancelCaller(s.Session)
	}
	if f.Rewrite != nil {
		was, note := s.Text(), "<"+f.String()+">"
		if !f.rewrite(s.Args) {
			note = "<" + f.String() + ": no argument it rewrites>"
		}
		db.run.Transcript.add(&line{session: s.Session, step: s.N, text: was, note: note})
		return nil
	}
	err := f.failure(s)
	db.run.Transcript.step(s, &stmtResult{Err: err, Rows: -1, NotRun: true})
	return err
}

// openTx is a transaction a session has open, with the context it began
// with: database/sql rolls it back once that context is done.
type openTx struct{ ctx context.Context }

// began records that a session opened a transaction.
func (db *DB) began(ctx context.Context) *openTx {
	db.mu.Lock()
	defer db.mu.Unlock()
	session := SessionOf(ctx)
	tx := &openTx{ctx: ctx}
	db.txs[session] = append(db.txs[session], tx)
	return tx
}

// ended records that a session's transaction is over, so that the
// scheduler knows its locks are released (unless it has another one open)
// and a delivery waiting for it to end (see deliver) goes on.
func (db *DB) ended(tx *openTx) {
	db.mu.Lock()
	defer db.mu.Unlock()
	session := SessionOf(tx.ctx)
	if i := slices.Index(db.txs[session], tx); i >= 0 {
		db.txs[session] = slices.Delete(db.txs[session], i, i+1)
	}
	if db.sched != nil {
		db.sched.finished(session, len(db.txs[session]) > 0)
	}
	db.txEnded.Broadcast()
}

// blind refuses a database call made for a delivery with a context that
// can never be done: context.Background(), context.TODO(), or
// context.WithoutCancel of the delivery's. With such a context modernc
// leaves a wait for the write lock to SQLite's own busy handler, which
// sleeps in real time: the synctest bubble cannot tell it from work, the
// scheduler cannot order it, and the caller's deadline does not reach it. A
// call without a session counts as the handler's while a delivery is in
// Process (unless the lab stalled it); the lab's own reads happen between
// deliveries. The call fails
// at once, and the run reports what the handler did, once per session.
func (db *DB) blind(ctx context.Context) error {
	if ctx.Done() != nil {
		return nil
	}
	who := SessionOf(ctx)
	db.mu.Lock()
	if who == "" {
		// A stalled delivery (HoldDelivery) is in Process, but stopped
		// inside the driver: the call is not its handler's.
		var active []string
		for name := range db.busy {
			if !db.stalled(name) {
				active = append(active, name)
			}
		}
		switch len(active) {
		case 0:
		case 1:
			who = active[0] // the one delivery in Process
		default:
			who = "a delivery"
		}
	}
	first := who != "" && !db.blinded[who]
	if who != "" {
		db.blinded[who] = true
	}
	db.mu.Unlock()
	if who == "" {
		return nil // the lab's own reads
	}
	what := "called the database with a context that is never done (context.Background(), context.TODO() or context.WithoutCancel)"
	if SessionOf(ctx) == "" {
		what = "called the database without the delivery's context (context.Background(), context.TODO(), or a call without a context)"
	}
	err := fmt.Errorf("lab: %s: %s: SQLite would wait for a lock in real time, unseen by the lab and deaf to the caller's deadline; pass Process's ctx", who, what)
	if first {
		db.run.Errorf("%s", strings.TrimPrefix(err.Error(), "lab: "))
	}
	return err
}

// after is called by the driver after each step: it logs the step and applies
// a fault that matches it.
func (db *DB) after(ctx context.Context, s *stmt, r *stmtResult) error {
	db.mu.Lock()
	sched, dead := db.sched, db.dead[s.Session]
	db.mu.Unlock()
	if dead {
		return errKilled // a ROLLBACK the pool runs for a dead delivery
	}
	if sched != nil {
		sched.turn(s.Session)
	}
	db.run.Transcript.step(s, r)
	db.mu.Lock()
	aside := !r.InTx && len(db.txs[s.Session]) > 0 && s.Op != OpBegin && s.Op != OpCommit && s.Op != OpRollback
	db.mu.Unlock()
	if aside {
		// A handler that writes (or reads) on the pool while its own
		// transaction is open: the statement is not the transaction's, and
		// its fate is not tied to the COMMIT. Said where it happens, so the
		// verdict that follows can be traced to it.
		db.run.Transcript.Note(s.Session, "(that statement ran on another connection of the pool, outside "+
			s.Session+"'s open transaction)", "")
	}
	if db.pg != nil && r.Err != nil {
		db.pg.starved(db.run.tb, r.Err)
	}
	db.mu.Lock()
	if db.sched != nil {
		// The session is inside a transaction while it has one open, even
		// when this statement ran on another connection of the pool.
		db.sched.finished(s.Session, r.InTx || len(db.txs[s.Session]) > 0)
		db.sched.ran(s)
	}
	db.mu.Unlock()
	f := db.fault(After, s)
	if f == nil {
		return nil
	}
	if f.crash {
		return db.die(s, After)
	}
	if f.Panic {
		p := f.panicking(s)
		db.run.Transcript.Note(s.Session, "the handler panics", "<"+f.String()+">")
		panic(p)
	}
	if f.Cancel {
		db.cancelCaller(s.Session)
		db.run.Transcript.Note(s.Session, "the caller cancels", "<"+f.String()+">")
		return nil
	}
	err := f.failure(s)
	db.run.Transcript.Note(s.Session, "the handler is told", "error: "+err.Error())
	return err
}

// fault finds the first fault matching s on side w and spends it if it is
// one-shot.
func (db *DB) fault(w When, s *stmt) *Fault {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, f := range db.faults {
		if f.matches(w, s) {
			f.strike()
			return f
		}
	}
	return nil
}
