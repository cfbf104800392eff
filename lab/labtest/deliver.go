package labtest

import (
	"context"
	"slices"
	"time"

	"idemlab/lab"
)

// Handing events to the handler: the delivery verbs, the answer each one
// gets, and what the lab checks around a single delivery.

// Delivery says how Deliver hands its event over. The zero value is a
// caller that waits for the answer, with the check that a failed or
// duplicate delivery changed nothing.
type Delivery struct {
	// Unchecked leaves that check out: for a delivery whose answer may be
	// lost after its work became durable (a fault after COMMIT), where an
	// error with the event applied is the truth, and the redelivery must
	// answer duplicate.
	Unchecked bool
	// Within is how long the caller waits for the answer before it gives
	// up, as an HTTP handler's request context would; 0 is as long as it
	// takes. A delivery still waiting for the lock then must answer busy
	// (lab.ErrBusy wraps context.DeadlineExceeded), never duplicate.
	Within time.Duration
	// Cancelled is a caller that gave up before the call: the context is
	// cancelled already, whatever Within says. The handler must answer
	// busy and write nothing.
	Cancelled bool
	// WhileLocked, on a server only, has another connection hold both
	// tables first, as SQLite's write lock holds the file, in a
	// transaction it holds open until the delivery has answered (on
	// PostgreSQL LOCK TABLE … IN EXCLUSIVE MODE, on MariaDB locking reads
	// of every row and gap at REPEATABLE READ). Whenever one of the
	// delivery's statements waits for that connection's locks, the lab
	// gives up on the caller's behalf: it ends the statement
	// (pg_cancel_backend or KILL QUERY, a busy error for the handler). On
	// SQLite the same is HoldWriteLock and Within.
	WhileLocked bool
	// Kill, when set, kills the process on that side of the delivery's
	// statement number KillAt, leaving the database's files as SIGKILL
	// would, and reopens the database, as a restarted service would (on
	// SQLite only). The answer is then Killed: a dead process answers
	// nothing. A delivery with fewer statements runs clean and answers. No
	// check is made either way.
	Kill   When
	KillAt int
}

// Deliver hands e to the variant's handler as a new session and returns its
// answer, as how says (at most one Delivery; none is the zero one). Around
// the call it checks what a single delivery must guarantee, unless
// Unchecked: a failed attempt and a duplicate leave the database as it
// was. (That an applied or duplicate answer is backed by the inbox row is
// checked with the other invariants when the run closes, by check.)
func (db *DB) Deliver(e lab.Event, how ...Delivery) Answer {
	if len(how) > 1 {
		db.run.tb.Fatalf("Deliver(%v, %d Deliveries), want at most one", e, len(how))
	}
	var d Delivery
	if len(how) == 1 {
		d = how[0]
	}
	timeout := d.Within
	if d.Cancelled {
		timeout = -1
	}
	if d.Kill != 0 {
		return db.crash(e, d.Kill, d.KillAt)
	}
	deliver := func() Answer {
		if d.Unchecked {
			return db.deliver(db.run.nextSession(), e, timeout)
		}
		before := db.snapshot()
		a := db.deliver(db.run.nextSession(), e, timeout)
		after := db.snapshot()
		if (a.Err != nil || a.Outcome == lab.Duplicate) && !before.equal(after) {
			db.run.Errorf("%s: Process(%v) = %v, but the database changed: %s", a.Session, e, a, before.diff(after))
		}
		return a
	}
	if d.WhileLocked {
		return db.whileLocked(deliver)
	}
	return deliver()
}

// deliver runs one delivery on a session and logs it. A timeout of 0 means
// none; a negative one, a context cancelled before the call.
func (db *DB) deliver(session string, e lab.Event, timeout time.Duration) Answer {
	return db.deliverFrom(context.Background(), session, e, timeout)
}

// deliverFrom is deliver for a caller whose context is parent, such as an
// HTTP request's: when parent ends, so does the delivery's.
func (db *DB) deliverFrom(parent context.Context, session string, e lab.Event, timeout time.Duration) Answer {
	ctx, cancel := context.WithCancel(parent)
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(parent, timeout)
	}
	defer cancel()
	if timeout < 0 {
		cancel()
	}
	db.mu.Lock()
	db.cancels[session] = cancel
	db.mu.Unlock()
	defer func() {
		db.mu.Lock()
		delete(db.cancels, session)
		db.mu.Unlock()
	}()
	// A cancellable context makes modernc wait for locks on a Go timer,
	// which the synctest bubble sees as durably blocked (see scheduler.go).
	ctx = withSession(ctx, session)
	ctx = withLog(ctx, &db.run.Transcript, session)
	db.run.Transcript.Note(session, "deliver "+e.String(), "")
	db.mu.Lock()
	db.busy[session]++
	db.mu.Unlock()
	start := time.Now()
	o, err := db.process(ctx, session, e)
	took := time.Since(start)
	db.mu.Lock()
	if db.busy[session]--; db.busy[session] == 0 {
		delete(db.busy, session)
	}
	db.mu.Unlock()
	db.endOwnTransactions(ctx, cancel, session, e)
	a := Answer{Session: session, Event: e, Outcome: o, Err: err, Took: took}
	if err != nil {
		a.Outcome = 0
	}
	if db.isDead(session) {
		return Answer{Session: session, Event: e} // a dead process answers nothing
	}
	db.run.Transcript.Note(session, "answer", a.String())
	db.mu.Lock()
	db.answers = append(db.answers, a)
	db.mu.Unlock()
	return a
}

// process calls the handler. A panic in it is the handler's failure to
// answer, reported as such and turned into an error answer, so that one
// broken delivery does not end the test binary and every later cell is
// still judged. A panic the lab injected (Fault.Panic) is no failure of
// the handler: it becomes the delivery's error answer. A server that
// recovers a handler's panic goes on serving, and its sender redelivers:
// net/http's logs the panic and closes the request's connection, an answer
// no sender takes for success.
func (db *DB) process(ctx context.Context, session string, e lab.Event) (o lab.Outcome, err error) {
	defer func() {
		p := recover()
		if ip, ok := p.(injectedPanic); ok {
			db.run.Transcript.Note(session, "the lab recovers the panic: the process goes on", "")
			o, err = 0, ip
			return
		}
		if p != nil {
			hp := handlerPanic{value: p, where: moduleFrame()}
			db.run.Errorf("%s: Process(%v) panicked instead of answering: %v", session, e, hp)
			o, err = 0, hp
		}
	}()
	return db.proc.Process(ctx, e)
}

// endOwnTransactions makes sure that a delivery's transactions are over
// before its answer is recorded. The context is still live here, as a
// user's server's would be after the call: a transaction the handler left
// open would keep its connection, and the write lock, until something else
// ended it. That is a finding. The lab then cancels the context, so that
// database/sql rolls the transaction back, and waits for that ROLLBACK.
//
// When the context is already done (a deadline passed), database/sql rolls
// back what is open on a goroutine of its own (Tx.awaitDone), which may run
// after Process returned. That ROLLBACK belongs to this delivery: it is
// waited for here, so that it is logged and faulted as this session's step
// and never runs during the next one.
func (db *DB) endOwnTransactions(ctx context.Context, cancel context.CancelFunc, session string, e lab.Event) {
	db.mu.Lock()
	// A transaction whose context is done is being rolled back by
	// database/sql (the handler may have cancelled a context of its own).
	leaked := slices.ContainsFunc(db.txs[session], func(tx *openTx) bool { return tx.ctx.Err() == nil })
	if db.dead[session] {
		leaked = false // what a killed delivery left open is not its handler's doing
	}
	db.mu.Unlock()
	if leaked {
		db.run.Errorf("%s: Process(%v): connection still in a transaction after Process returned", session, e)
	}
	// Whatever is still open ends now: database/sql rolls back a
	// transaction whose context is done, a killed delivery's included.
	cancel()
	db.mu.Lock()
	defer db.mu.Unlock()
	for len(db.txs[session]) > 0 && !db.run.cell.isStopped() {
		db.txEnded.Wait()
	}
}

// cancelCaller cancels the context of session's delivery, as its caller
// giving up would (Fault.Cancel).
func (db *DB) cancelCaller(session string) {
	db.mu.Lock()
	cancel := db.cancels[session]
	db.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Answer is what the handler said to one delivery.
type Answer struct {
	Session string
	Event   lab.Event
	Outcome lab.Outcome // zero when Err is set
	Err     error
	// Killed: the process was killed during the delivery (Delivery.Kill),
	// which answered nothing.
	Killed bool
	// Took is how long Process ran before it answered, on the clock the
	// run keeps: the bubble's fake one on SQLite, where a lock wait of five
	// seconds takes five fake seconds and no real time.
	Took time.Duration
}

// String renders the answer: "applied", "duplicate", or the error with its
// kind, e.g. "error (busy): busy, retry later: database is locked (5)".
func (a Answer) String() string {
	if a.Err != nil {
		return "error (" + lab.ErrorKind(a.Err) + "): " + a.Err.Error()
	}
	return a.Outcome.String()
}

// Count tallies answers: how many applied, how many duplicate, how many
// errors.
func Count(answers []Answer) (applied, duplicate, failed int) {
	for _, a := range answers {
		switch {
		case a.Err != nil:
			failed++
		case a.Outcome == lab.Applied:
			applied++
		case a.Outcome == lab.Duplicate:
			duplicate++
		}
	}
	return applied, duplicate, failed
}
