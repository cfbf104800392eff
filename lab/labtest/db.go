package labtest

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"idemlab/lab"

	"modernc.org/sqlite"
)

// Account is a row of the accounts table as a scenario seeds it.
type Account struct {
	ID      int64
	Balance int64
}

// DB is one variant's database for one scenario: a temporary file with the
// variant's schema, opened with the variant's DSN through the hooking
// connector, and the variant's handler on top of it.
type DB struct {
	// Path is the database file.
	Path string

	run *Run
	sql *sql.DB // the handler's pool
	// own is the lab's own pool on the same database: its reads, seeds and
	// holds run there, apart from the handler's pool, as another process's
	// would, so that a pool the handler limits (to one connection, as
	// correct's doc recommends) is the handler's alone. On PostgreSQL it is
	// the handler's pool; the lab's reads there use the control connection.
	own     *sql.DB
	dsn     string
	wal     bool
	proc    lab.Processor
	initial map[int64]int64 // balances as seeded
	pg      *pgDB           // nil on SQLite

	mu      sync.Mutex
	steps   map[string]int // statements so far, per session
	pages   int64          // max_page_count for the handler's connections; 0 for none
	faults  []*Fault
	sched   *scheduler
	answers []Answer

	// Also guarded by mu: what each session has open (see deliver).
	txs     map[string][]*openTx          // open transactions, per session
	txEnded sync.Cond                     // signalled when a transaction ends; on mu
	busy    map[string]int                // sessions inside Process
	cancels map[string]context.CancelFunc // each delivery's caller, for Fault.Cancel
	blinded map[string]bool               // sessions already reported by blind
	dead    map[string]bool               // sessions a crash fault killed (see Crash)
	frozen  string                        // where die kept the files at the instant of a crash
	snap    *sql.Stmt                     // snapshot's query, prepared on sql

	// labCtx is the context of the lab's own statements (its reads, seeds
	// and holds). It can be cancelled, so the driver never takes one of
	// them for a handler's call without a context (see blind), and a wait
	// of theirs for a lock runs on the bubble's clock; closing the
	// database cancels it.
	labCtx    context.Context
	labCancel context.CancelFunc
	stalls    map[string]*stall // deliveries HoldDelivery stops, by session
}

// Open creates a fresh database for the run's variant, seeded with accounts
// (account 1 with balance 0 when none are given). Setting it up is the lab's
// job, not the variant's: a failure here stops the test.
func (r *Run) Open(accounts ...Account) *DB {
	r.tb.Helper()
	return r.open(false, accounts)
}

// OpenScheduled is Open for a database whose deliveries the scheduler runs
// (Concurrently, Interleave, Interleavings). On SQLite it is Open: a
// waiting session retries on the bubble's fake clock, which the scheduler
// moves. On PostgreSQL a waiting session waits in real time, and the
// variant's lock_timeout and statement_timeout (which count a lock wait)
// would end a wait that ran longer than they allow, turning it into busy
// on a slow enough machine: a verdict decided by a timing. So its
// connections run with lock_timeout = 0 and statement_timeout = 0 (no
// limit), and a scheduled wait ends only when the scheduler steps the
// session that holds the lock to its COMMIT or ROLLBACK, or when the
// server's deadlock detector ends a cycle of waits (40P01). Where the
// timeout is the scenario (LockTimeout) the database is opened with Open
// and keeps the variant's own.
func (r *Run) OpenScheduled(accounts ...Account) *DB {
	r.tb.Helper()
	return r.openMode(false, true, accounts)
}

// OpenWAL is Open with the database file in write-ahead-log mode, which
// changes how commits reach the file and how a crash is recovered from. The
// mode is a property of the file, set once at setup; the variant's DSN is
// unchanged.
func (r *Run) OpenWAL(accounts ...Account) *DB {
	r.tb.Helper()
	return r.open(true, accounts)
}

func (r *Run) open(wal bool, accounts []Account) *DB {
	return r.openMode(wal, false, accounts)
}

// openMode is open, on PostgreSQL without the variant's timeouts when
// untimed (see OpenScheduled).
func (r *Run) openMode(wal, untimed bool, accounts []Account) *DB {
	r.tb.Helper()
	if len(accounts) == 0 {
		accounts = []Account{{ID: 1}}
	}
	if r.pg != nil {
		if wal {
			r.tb.Fatalf("OpenWAL: write-ahead-log mode is SQLite's; PostgreSQL always logs ahead")
		}
		return r.openPostgres(accounts, untimed)
	}
	r.dbs++
	path := filepath.Join(r.tempDir(), fmt.Sprintf("lab%d.db", r.dbs))
	dsn := r.Variant.DSN(path)
	// Setting up a database costs a few fsyncs; enumerating interleavings
	// opens hundreds. The first database with a given seed is set up for
	// real, the others are byte copies of it, which is the same thing.
	seed := fmt.Sprint(wal, accounts)
	if tmpl, ok := r.templates[seed]; ok {
		if err := os.WriteFile(path, tmpl, 0o600); err != nil {
			r.tb.Fatalf("copying the set-up database to %s: %v", path, err)
		}
	} else {
		if err := setup(dsn, r.Variant.Schema, wal, accounts); err != nil {
			r.tb.Fatalf("setting up %s for %s: %v", path, r.Variant.Name, err)
		}
		tmpl, err := os.ReadFile(path)
		if err != nil {
			r.tb.Fatalf("reading the set-up database: %v", err)
		}
		r.templates[seed] = tmpl
	}
	db := r.attach(path, wal)
	for _, a := range accounts {
		db.initial[a.ID] = a.Balance
	}
	r.opened = append(r.opened, db)
	return db
}

// attach opens the database file at path, already set up, with the run's
// variant: its DSN through the hooking connector, and its handler on top.
func (r *Run) attach(path string, wal bool) *DB {
	db := &DB{
		Path:    path,
		run:     r,
		dsn:     r.Variant.DSN(path),
		wal:     wal,
		initial: map[int64]int64{},
		steps:   map[string]int{},
		txs:     map[string][]*openTx{},
		busy:    map[string]int{},
		cancels: map[string]context.CancelFunc{},
		blinded: map[string]bool{},
		dead:    map[string]bool{},
	}
	db.txEnded.L = &db.mu
	db.labCtx, db.labCancel = context.WithCancel(context.Background())
	db.labCtx.Done() // made now, inside the cell's bubble
	r.cell.register(db)
	db.sql, db.own = db.openPool(), db.openPool()
	// A story that closes only the handler's pool (db.Pool().Close()), or
	// nothing, leaves none of the lab's connections behind in its bubble.
	r.tb.Cleanup(func() { db.own.Close() })
	db.proc = r.Variant.New(db.sql)
	return db
}

// openPool opens a connection pool on the database through the hooking
// connector.
func (db *DB) openPool() *sql.DB {
	base, err := sqlite.NewConnector(db.dsn)
	if err != nil {
		db.run.tb.Fatalf("sqlite.NewConnector(%q): %v", db.dsn, err)
	}
	return sql.OpenDB(&connector{base: base, hooks: db, begin: beginStatement(db.dsn)})
}

// tempDir returns a new directory for database files, removed when the test
// ends. Where the machine has a memory-backed /dev/shm it is made there: the
// same files, locks and separate connections as on disk, without waiting for
// the disk at every COMMIT, which makes enumerating hundreds of interleavings
// five times faster. The kit never tests power loss, only process death,
// which a memory-backed file survives just as well.
func (r *Run) tempDir() string {
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "idemlab-"); err == nil {
			r.tb.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return r.tb.TempDir()
}

// setup creates the schema and the accounts on a connection of its own, the
// way a migration tool would before the service starts. Whatever that
// connection's settings were, the handler's connections do not inherit them.
func setup(dsn, schema string, wal bool, accounts []Account) error {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if wal {
		var mode string
		if err := db.QueryRow(`PRAGMA journal_mode = WAL`).Scan(&mode); err != nil || mode != "wal" {
			return fmt.Errorf("PRAGMA journal_mode = WAL: %q, %v", mode, err)
		}
	}
	if _, err := db.Exec(schema); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	for _, a := range accounts {
		if _, err := db.Exec(`INSERT INTO accounts (id, balance) VALUES (?, ?)`, a.ID, a.Balance); err != nil {
			return fmt.Errorf("account %d: %w", a.ID, err)
		}
	}
	return nil
}

// beginStatement tells what BEGIN the driver issues for dsn, from its
// _txlock parameter, so that transcripts show the lock mode the variant chose.
func beginStatement(dsn string) string {
	_, query, _ := strings.Cut(dsn, "?")
	values, _ := url.ParseQuery(query)
	switch mode := strings.ToUpper(values.Get("_txlock")); mode {
	case "IMMEDIATE", "EXCLUSIVE":
		return "BEGIN " + mode
	}
	return "BEGIN"
}

// Close closes the database. Run.Close calls it after the invariants.
func (db *DB) close() error {
	if db.pg != nil {
		return db.run.closePostgres(db)
	}
	defer db.labCancel()
	return errors.Join(db.sql.Close(), db.own.Close())
}

// Inject adds a fault for the statements that follow.
func (db *DB) Inject(f Fault) *Fault {
	db.mu.Lock()
	defer db.mu.Unlock()
	p := &f
	db.faults = append(db.faults, p)
	return p
}

// Reset empties the inbox, puts every balance back to its seed, and forgets
// faults, limits and answers: the database is as Open left it, without the
// cost of a new file and new connections. A property test that runs
// thousands of short stories starts each one this way.
func (db *DB) Reset() {
	db.run.tb.Helper()
	db.releaseStalls()
	db.labExec("Reset", `DELETE FROM inbox`)
	for id, b := range db.initial {
		db.labExec("Reset", `UPDATE accounts SET balance = $1 WHERE id = $2`, b, id)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.faults, db.pages, db.answers = nil, 0, nil
	clear(db.steps)
	clear(db.blinded)
}

// labExec runs one of the lab's own writes, never a handler's. On
// PostgreSQL it runs in a READ COMMITTED transaction, whatever level the
// variant's connections have: at SERIALIZABLE the lab's write would take
// predicate locks of its own, from the table in shared memory that the
// deliveries' answers depend on (see pgDB.interference).
func (db *DB) labExec(caller, query string, args ...any) {
	db.run.tb.Helper()
	if db.pg == nil {
		if _, err := db.own.ExecContext(db.labCtx, query, args...); err != nil {
			db.run.tb.Fatalf("%s: %v", caller, err)
		}
		return
	}
	tx, err := db.own.BeginTx(db.labCtx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err == nil {
		_, err = tx.ExecContext(db.labCtx, query, args...)
		err = errors.Join(err, tx.Commit())
	}
	if err != nil {
		db.run.tb.Fatalf("%s: %v", caller, err)
	}
}

// PurgeInbox deletes the whole inbox history, as a retention job would.
// The credits those rows recorded stay in the balances and become the new
// baseline, and the answers about them are forgotten: the invariants hold
// for what the database still remembers.
func (db *DB) PurgeInbox() {
	db.run.tb.Helper()
	db.labExec("PurgeInbox", `DELETE FROM inbox`)
	balances, _ := db.State()
	db.mu.Lock()
	defer db.mu.Unlock()
	for id, b := range balances {
		db.initial[id] = b
	}
	db.answers = nil
}

// LimitPages caps the database at n pages for the handler's connections, as
// a full disk would: a write that needs a new page fails with SQLITE_FULL.
// 0 lifts the cap.
func (db *DB) LimitPages(n int64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.pages = n
}

func (db *DB) pageLimit() int64 {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.pages
}

// PageCount returns the number of pages in the database file.
func (db *DB) PageCount() int64 {
	var n int64
	if err := db.own.QueryRowContext(db.labCtx, `PRAGMA page_count`).Scan(&n); err != nil {
		db.run.tb.Fatalf("PRAGMA page_count: %v", err)
	}
	return n
}

// Lift removes every fault, spent or not.
func (db *DB) Lift() {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.faults = nil
}

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
	if f.Cancel {
		db.cancelCaller(s.Session)
	}
	if f.Rewrite != nil {
		was := s.Text()
		f.Rewrite(s.Args)
		db.run.Transcript.add(&line{session: s.Session, step: s.N, text: was, note: "<" + f.String() + ">"})
		return nil
	}
	err := f.failure(s)
	db.run.Transcript.Step(s, &stmtResult{Err: err, Rows: -1, NotRun: true})
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
	db.run.Transcript.Step(s, r)
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
	}
	db.mu.Unlock()
	f := db.fault(After, s)
	if f == nil {
		return nil
	}
	if f.crash {
		return db.die(s, After)
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
			f.spent = !f.Persistent
			f.fired++
			return f
		}
	}
	return nil
}

// Deliver hands e to the variant's handler as a new session and returns its
// answer. Around the call it checks what a single delivery must guarantee: a
// failed attempt and a duplicate leave the database as it was. (That an
// applied or duplicate answer is backed by the inbox row is checked with the
// other invariants, by Check.)
func (db *DB) Deliver(e lab.Event) Answer {
	before := db.snapshot()
	a := db.Attempt(e)
	after := db.snapshot()
	if (a.Err != nil || a.Outcome == lab.Duplicate) && !before.equal(after) {
		db.run.Errorf("%s: Process(%v) = %v, but the database changed: %s", a.Session, e, a, before.diff(after))
	}
	return a
}

// Attempt is Deliver without the check that a failed attempt changed
// nothing. It is for deliveries whose answer may be lost after their work
// became durable — a fault after COMMIT, a crash — where an error with the
// event applied is the truth, and the redelivery must answer duplicate.
func (db *DB) Attempt(e lab.Event) Answer {
	return db.deliver(db.run.nextSession(), e, 0)
}

// AttemptWithin is Attempt with a caller that gives up after d, as an HTTP
// handler's request context would: a delivery still waiting for the lock
// then must answer busy (lab.ErrBusy wraps context.DeadlineExceeded), never
// duplicate.
func (db *DB) AttemptWithin(e lab.Event, d time.Duration) Answer {
	return db.deliver(db.run.nextSession(), e, d)
}

// AttemptCancelled is Attempt by a caller that gave up before the call: the
// context is already cancelled. The handler must answer busy and write
// nothing.
func (db *DB) AttemptCancelled(e lab.Event) Answer {
	return db.deliver(db.run.nextSession(), e, -1)
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
// still judged.
func (db *DB) process(ctx context.Context, session string, e lab.Event) (o lab.Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			hp := handlerPanic{value: p, where: panicSite()}
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

// HoldWriteLock takes the database's write lock on a connection of its own,
// as another process would, and returns the function that releases it.
func (db *DB) HoldWriteLock() (release func()) {
	db.run.tb.Helper()
	return db.hold("HoldWriteLock", []string{"BEGIN IMMEDIATE"}, "BEGIN IMMEDIATE", "the write lock")
}

// hold runs statements, the first of them a BEGIN, on a connection of its
// own, as another process would, notes them in the transcript as shown,
// holding what, and returns the function that rolls the transaction back.
// HoldWriteLock and HoldReadLock are its uses.
func (db *DB) hold(caller string, statements []string, shown, what string) (release func()) {
	db.run.tb.Helper()
	ctx := db.labCtx
	c, err := db.own.Conn(ctx)
	if err != nil {
		db.run.tb.Fatalf("%s: %v", caller, err)
	}
	for _, st := range statements {
		if _, err := c.ExecContext(ctx, st); err != nil {
			db.run.tb.Fatalf("%s: %s: %v", caller, st, err)
		}
	}
	db.run.Transcript.Note("other", shown, "holds "+what)
	return func() {
		if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
			db.run.tb.Fatalf("%s release: %v", caller, err)
		}
		c.Close()
		db.run.Transcript.Note("other", "ROLLBACK", "releases "+what)
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

// HoldReadLock opens a read transaction on a connection of its own, as a
// reporting query in another process would, and returns the function that
// ends it. In rollback-journal mode its SHARED lock lets a writer start but
// not commit: the writer's COMMIT waits for it, up to the busy timeout.
func (db *DB) HoldReadLock() (release func()) {
	db.run.tb.Helper()
	read := "SELECT count(*) FROM accounts"
	return db.hold("HoldReadLock", []string{"BEGIN DEFERRED", read}, "BEGIN; "+read, "a read lock")
}

// Answer is what the handler said to one delivery.
type Answer struct {
	Session string
	Event   lab.Event
	Outcome lab.Outcome // zero when Err is set
	Err     error
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

// Balance returns the balance of account id, or -1 if there is no such
// account.
func (db *DB) Balance(id int64) int64 {
	s := db.snapshot()
	if b, ok := s.balances[id]; ok {
		return b
	}
	return -1
}

// Steps returns how many statements session has run on this database.
func (db *DB) Steps(session string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.steps[session]
}

// Pool returns the database's connection pool, for code beside the handler
// that shares its database (an outbox relay, say). Its calls carry no
// session, so they are neither recorded nor faulted.
func (db *DB) Pool() *sql.DB { return db.sql }

// State returns every account's balance and the rows of the inbox, as the
// events they store. Call it when no delivery is running: the two tables
// are read one after the other.
func (db *DB) State() (balances map[int64]int64, inbox []lab.Event) {
	s := db.snapshot()
	for _, r := range s.inbox {
		inbox = append(inbox, lab.Event{Source: r.Source, EventID: r.EventID, AccountID: r.AccountID, Amount: r.Amount})
	}
	return s.balances, inbox
}

// InboxRows returns the number of rows in the inbox.
func (db *DB) InboxRows() int { return len(db.snapshot().inbox) }

// row is one inbox row.
type row struct {
	lab.Key
	AccountID, Amount int64
}

// String renders the row as an event.
func (r row) String() string {
	return fmt.Sprintf("%s account=%d amount=%d", r.Key, r.AccountID, r.Amount)
}

// snapshot is the whole content of the two tables, small enough to compare.
type snapshot struct {
	balances map[int64]int64
	inbox    []row // sorted
}

func (db *DB) snapshot() snapshot {
	s := snapshot{balances: map[int64]int64{}}
	// One query, so one read transaction: a snapshot is taken around every
	// delivery, and each read transaction costs SQLite its locks and its
	// look for a hot journal. The casts and coalesces read whatever a
	// broken schema let in (a NULL key, a REAL amount) as a row the
	// invariants can report, instead of a scan error that would stop the lab.
	// It is prepared once per pool: parsing it again for every snapshot
	// cost as much as running it.
	//
	// On PostgreSQL it runs on the lab's control connection, at READ
	// COMMITTED, with the schema named: on the variant's pool it would run
	// at the variant's isolation level, and at SERIALIZABLE take predicate
	// locks of its own, from the table in shared memory that the
	// deliveries' answers depend on (see pgDB.interference).
	if db.snap == nil {
		pool, schema := db.own, ""
		if db.pg != nil {
			pool, schema = db.pg.srv.control, db.pg.schema+"."
		}
		st, err := pool.PrepareContext(db.labCtx, `SELECT 0, id, CAST(balance AS BIGINT), '', '', 0 FROM `+schema+`accounts
			UNION ALL
			SELECT 1, 0, CAST(amount AS BIGINT), coalesce(source, '(NULL)'), coalesce(event_id, '(NULL)'),
				coalesce(account_id, 0) FROM `+schema+`inbox`)
		if err != nil {
			db.run.tb.Fatalf("reading accounts and inbox: %v", err)
		}
		db.snap = st
	}
	rows, err := db.snap.QueryContext(db.labCtx)
	if err != nil {
		db.run.tb.Fatalf("reading accounts and inbox: %v", err)
	}
	for rows.Next() {
		var table, id, amount int64
		var r row
		if err := rows.Scan(&table, &id, &amount, &r.Source, &r.EventID, &r.AccountID); err != nil {
			db.run.tb.Fatalf("reading accounts and inbox: %v", err)
		}
		if table == 0 {
			s.balances[id] = amount
			continue
		}
		r.Amount = amount
		s.inbox = append(s.inbox, r)
	}
	if err := rows.Err(); err != nil {
		db.run.tb.Fatalf("reading accounts and inbox: %v", err)
	}
	rows.Close()
	slices.SortFunc(s.inbox, func(a, b row) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.EventID, b.EventID),
			cmp.Compare(a.AccountID, b.AccountID), cmp.Compare(a.Amount, b.Amount))
	})
	return s
}

func (s snapshot) equal(t snapshot) bool { return s.diff(t) == "" }

// diff describes how t differs from s, or returns "".
func (s snapshot) diff(t snapshot) string {
	var parts []string
	for id, b := range s.balances {
		if t.balances[id] != b {
			parts = append(parts, fmt.Sprintf("account %d balance %d -> %d", id, b, t.balances[id]))
		}
	}
	slices.Sort(parts)
	for _, r := range t.inbox {
		if !slices.Contains(s.inbox, r) {
			parts = append(parts, "inbox gained "+r.String())
		}
	}
	for _, r := range s.inbox {
		if !slices.Contains(t.inbox, r) {
			parts = append(parts, "inbox lost "+r.String())
		}
	}
	return strings.Join(parts, "; ")
}
