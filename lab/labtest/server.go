package labtest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/lab"
	"idemlab/lab/report"
)

// This file is the engine's server backend: what a Run does the same on
// every database server it runs on, PostgreSQL (postgres.go) and MariaDB
// (mariadb.go), and the interface through which the two differ (engine).
//
// A Run on a server opens each DB in a namespace of its own on the server
// (a schema on PostgreSQL, a database on MariaDB, which has no schemas
// inside a database), connects to it through the server's database/sql
// connector wrapped in the same hooking connector as SQLite's, and runs the
// scheduler in real time.
//
// Real time, because a session waiting for a lock on a server waits on a
// network socket, which a synctest bubble does not count as durably
// blocked. So a scheduled step is complete when its session parks before
// its next statement, finishes, or is seen waiting for a lock held by
// another session of the test, seen by asking the server from a control
// connection (engine.blocked). The control connection is polled until one
// of the three is true: polling detects a state, it never decides one, so
// no verdict depends on how long anything took. Timeouts are the server's
// (from the variant's DSN), never a cancelled context: both drivers answer
// a cancelled context by closing the connection, which would change what
// the test observes. A database whose deliveries the scheduler runs is
// opened without them (OpenScheduled), so that no scheduled wait can end by
// a timer on a slow machine: it ends when the scheduler steps its holder.

// Server is a database server the lab works on, PostgreSQL or MariaDB,
// connected to by NeedPostgres or NeedMariaDB for one test process, and
// cleaned up by Close.
type Server struct {
	admin   *sql.DB // PostgreSQL: the maintenance database, for CREATE and DROP DATABASE
	control *sql.DB // the lab's own, unhooked: namespaces, seeds, snapshots, the waiting check
	url     string  // the lab's database
	name    string  // this process's: the lab's database, or the prefix of its databases
	schemas atomic.Int64
	engine  engine
}

// engine is what the lab does differently on each server.
type engine interface {
	// setting is the transcript's first line for a run at level: the
	// server and what each of the variant's connections is set to.
	setting(level Level) string
	// form is the variant's description on the server; ok is false when
	// the variant has none, and no row in the server's matrices.
	form(v lab.Variant) (f form, ok bool)
	// namespace names the n-th namespace of srv, and the DB's Path in it.
	namespace(srv *Server, n int64) (ns, path string)
	// create are the statements that make namespace ns and make it their
	// connection's own (enter), and those that give it up once its tables
	// are made (leave).
	create(ns string) (enter, leave []string)
	// dsn returns the connection string of the variant's pool on ns, with
	// the variant's settings at level, and without its timeouts when
	// untimed (see OpenScheduled).
	dsn(srv *Server, ns string, f form, level Level, untimed bool) (string, error)
	// connector returns the driver's connector for dsn.
	connector(dsn string) (driver.Connector, error)
	// integer is the type a CAST to a 64-bit integer names (see
	// snapshotQuery).
	integer() string
	// empty are the statements that empty the tables of ns, run on one
	// connection of the control pool (see Server.reseed).
	empty(ns string) []string
	// drop is the statement that removes namespace ns, its pool closed.
	drop(ns string) string
	// close removes whatever the process's runs left on srv and closes its
	// connections.
	close(srv *Server) error
	// versionQuery asks the server for its version.
	versionQuery() string
	// pid returns the server's id of a new connection's session: what
	// blocked is asked about.
	pid(c driver.Conn) uint32
	// blocked reports whether session pid waits for a lock that one of
	// the sessions among holds, asked on the control connection ctl.
	blocked(ctl *sql.DB, pid int64, among []int64) (bool, error)
	// interference says what of the server's state, shared with its other
	// clients, can change its answers on a schedule the lab repeats; "" if
	// nothing is known to.
	interference(srv *Server, serializable bool) string
	// starved returns the server's code and message when err is a refusal
	// for the server's lack of resources, and "" otherwise.
	starved(err error) (code, message string)
	// sessionQuery asks a connection for its session's id: what blocked
	// and cancelWaiting take.
	sessionQuery() string
	// cancelWaiting ends the statement of every session among that waits
	// for a lock session holder holds, leaving its connection open, and
	// returns how many it ended.
	cancelWaiting(srv *Server, among []int64, holder int64) (int, error)
	// cancelName is how the transcript names what cancelWaiting does.
	cancelName() string
	// holdTables are the statements by which a connection holds inbox and
	// accounts as SQLite's write lock holds the file, until it rolls back:
	// no other transaction can write a row, plain reads go through.
	holdTables() []string
}

// form is a variant's description on one server: lab.Postgres or
// lab.MariaDB, with the schema as statements.
type form struct {
	schema []string
	dsn    func(server string, level lab.Isolation) string
	new    func(db *sql.DB) lab.Processor
}

// Level is one column of a server's backend axis: what every transaction
// of the variant's connections runs at.
type Level struct {
	// Isolation is the isolation level the variant's DSN is given.
	Isolation lab.Isolation
	// SnapshotIsolation, on MariaDB, sets innodb_snapshot_isolation=ON on
	// every connection of the variant's pool, whatever its DSN says: a
	// transaction that writes or lock-reads a row changed since its
	// snapshot was taken fails with 1020 and is rolled back whole
	// (mariadb.TestSnapshotIsolation). It changes nothing at READ
	// COMMITTED. PostgreSQL has no such setting: a run there with it set
	// stops the test.
	SnapshotIsolation bool
}

// need is NeedPostgres and NeedMariaDB: connect's server for a test, which
// it skips with the reason when connect returns no server and fails when
// connect fails; what the test left on the server is dropped when it ends.
func need(tb testing.TB, connect func() (*Server, string, error)) *Server {
	tb.Helper()
	srv, why, err := connect()
	if err != nil {
		tb.Fatal(err)
	}
	if srv == nil {
		tb.Skip(why)
	}
	tb.Cleanup(func() {
		if err := srv.close(); err != nil {
			tb.Errorf("dropping what the test left on the server: %v", err)
		}
	})
	return srv
}

// close drops what the process's runs left on the server and closes the
// lab's connections.
func (s *Server) close() error { return s.engine.close(s) }

// URL returns the connection string of the lab's database, for a process
// of the test's own (a receiver it starts, say) to connect to. The
// database is empty until the test creates what it needs in it.
func (s *Server) URL() string { return s.url }

// Version returns the server's version string.
func (s *Server) Version() string {
	var v string
	if err := s.control.QueryRow(s.engine.versionQuery()).Scan(&v); err != nil {
		return "unknown: " + err.Error()
	}
	return v
}

// serverTarget is where a Run on a server opens its databases. A run and
// its children (one per interleaving, per fault case) share it.
type serverTarget struct {
	srv   *Server
	level Level

	mu   sync.Mutex
	free map[string][]*DB // databases a child closed, by seed, for the next child
	root *Run             // the run whose Close really closes them
}

// NewServerRun starts a run of v on srv at level.
func NewServerRun(tb testing.TB, v lab.Variant, srv *Server, level Level) *Run {
	r := NewRun(tb, v)
	r.pg = &serverTarget{srv: srv, level: level, free: map[string][]*DB{}, root: r}
	return r
}

// Server reports whether r runs on a server, PostgreSQL or MariaDB, and at
// which level.
func (r *Run) Server() (Level, bool) {
	if r.pg == nil {
		return Level{}, false
	}
	return r.pg.level, true
}

// RunServerCell runs scenario sc against variant v on srv at level, in
// real time (see the top of this file), and returns the verdict with its
// evidence, like RunCell. A variant with no form on the server (no
// Postgres, or no MariaDB) is not run: the cell is nil.
func RunServerCell(t *testing.T, sc Scenario, v lab.Variant, srv *Server, level Level) *report.Cell {
	if _, ok := srv.engine.form(v); !ok {
		return nil
	}
	r := NewServerRun(t, v, srv, level)
	t.Cleanup(func() {
		// A lab failure (Fatalf) skips r.Close: the server's connections
		// must still go back.
		for _, db := range r.opened {
			db.closeReally()
		}
		r.closeKept()
	})
	r.Transcript.Note("", srv.engine.setting(level), "")
	sc.Run(r)
	r.Close()
	return r.verdict("")
}

// create makes namespace ns (engine.create) with the tables of schema and
// the accounts, on a connection of the control pool, as a migration would
// before the service starts.
func (s *Server) create(ns string, schema []string, accounts []Account) error {
	enter, leave := s.engine.create(ns)
	return s.execAll("creating", slices.Concat(enter, schema, inserts("", accounts)), leave)
}

// reseed empties the tables of namespace ns (engine.empty) and writes the
// accounts again, on a connection of the control pool, at READ COMMITTED:
// the variant's pool would write at the variant's isolation level, and at
// SERIALIZABLE take locks of the lab's own.
func (s *Server) reseed(ns string, accounts []Account) error {
	return s.execAll("reseeding", slices.Concat(s.engine.empty(ns), inserts(ns+".", accounts)), nil)
}

// inserts are the statements that write accounts into table
// prefix+"accounts". The values are whole numbers, written into the
// statement: the engines' placeholders differ ($1, ?).
func inserts(prefix string, accounts []Account) []string {
	var out []string
	for _, a := range accounts {
		out = append(out, fmt.Sprintf(`INSERT INTO %saccounts (id, balance) VALUES (%d, %d)`, prefix, a.ID, a.Balance))
	}
	return out
}

// execAll runs statements in turn on one connection of the control pool,
// stopping at the first that fails (the error says doing what), then the
// statements of after, whatever happened.
func (s *Server) execAll(doing string, statements, after []string) error {
	ctx := context.Background()
	c, err := s.control.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	defer func() {
		for _, st := range after {
			c.ExecContext(ctx, st)
		}
	}()
	for _, st := range statements {
		if _, err := c.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("%s: %s: %w", doing, st, err)
		}
	}
	return nil
}

// serverDB is what a DB on a server keeps besides the pool: its namespace,
// and the server's ids of its connections' sessions, whose waits the
// scheduler looks for.
type serverDB struct {
	srv    *Server
	schema string // its namespace: a schema (PostgreSQL) or a database (MariaDB)
	seed   string // the accounts it was set up with, and untimed
	// untimed: opened by OpenScheduled, without the variant's timeouts
	untimed bool
	mu      sync.Mutex
	pids    []uint32
	// starvedOnce: starved has reported this database
	starvedOnce bool
	// script, when set, answers for the server as the wait detector: a
	// test's server whose answers come in an order of its choosing.
	script func(pid uint32) (bool, error)
}

// connected records a new connection's session.
func (p *serverDB) connected(pid uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pids = append(p.pids, pid)
}

// sessions returns the ids of the database's connections so far.
func (p *serverDB) sessions() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	pids := make([]int64, len(p.pids))
	for i, x := range p.pids {
		pids[i] = int64(x)
	}
	return pids
}

// blocked reports whether session pid waits for a lock that one of the
// database's other connections holds.
func (p *serverDB) blocked(pid uint32) (bool, error) {
	pids := p.sessions()
	if p.script != nil {
		return p.script(pid)
	}
	return p.srv.engine.blocked(p.srv.control, int64(pid), pids)
}

// interference is the server's engine.interference, for a failure of the
// lab's.
func (p *serverDB) interference(serializable bool) string {
	return p.srv.engine.interference(p.srv, serializable)
}

// starved fails the test, once per database, when a statement of a
// delivery fails for the server's lack of resources (out of shared memory,
// too many connections): an answer no handler chose, which says nothing of
// the variant and would make its verdict the server's.
func (p *serverDB) starved(tb testing.TB, err error) {
	code, message := p.srv.engine.starved(err)
	if code == "" {
		return
	}
	p.mu.Lock()
	first := !p.starvedOnce
	p.starvedOnce = true
	p.mu.Unlock()
	if first {
		tb.Errorf("lab: the server refused a statement for lack of resources (%s, SQLSTATE %s):\n"+
			"the verdict would be the server's, not the variant's.%s",
			message, code, p.interference(code == "53200"))
	}
}

// openServer creates a namespace for a new database, with the variant's
// schema on the server and the accounts, and opens the variant's pool on
// it.
//
// Enumerating interleavings opens a database per interleaving; setting one
// up costs more than running it. So a database a child run has closed is
// kept, with its pool, and the next child that asks for the same seed gets
// it back emptied and reseeded: the same tables, rows and connection
// settings as a new one, and nothing left of the last case (the inbox and
// accounts are rewritten, faults, answers and step counts forgotten).
func (r *Run) openServer(accounts []Account, untimed bool) *DB {
	r.tb.Helper()
	seed := fmt.Sprint(untimed, accounts)
	r.pg.mu.Lock()
	var reuse *DB
	if free := r.pg.free[seed]; len(free) > 0 {
		reuse = free[len(free)-1]
		r.pg.free[seed] = free[:len(free)-1]
	}
	r.pg.mu.Unlock()
	if reuse != nil {
		reuse.reseed(r, accounts)
		r.opened = append(r.opened, reuse)
		return reuse
	}
	srv := r.pg.srv
	eng := srv.engine
	f, ok := eng.form(r.Variant)
	if !ok {
		r.tb.Fatalf("%s has no form on this server", r.Variant.Name)
	}
	ns, path := eng.namespace(srv, srv.schemas.Add(1))
	if err := srv.create(ns, f.schema, accounts); err != nil {
		r.tb.Fatalf("setting up %s for %s: %v", path, r.Variant.Name, err)
	}
	dsn, err := eng.dsn(srv, ns, f, r.pg.level, untimed)
	if err != nil {
		r.tb.Fatalf("the DSN of %s: %v", r.Variant.Name, err)
	}
	base, err := eng.connector(dsn)
	if err != nil {
		r.tb.Fatalf("connecting to %q: %v", dsn, err)
	}
	db := r.newDB(path, dsn)
	db.pg = &serverDB{srv: srv, schema: ns, seed: seed, untimed: untimed}
	db.sql = sql.OpenDB(&connector{base: base, hooks: db, begin: "BEGIN", pg: db.pg})
	db.own = db.sql
	new := r.Variant.New
	if f.new != nil {
		new = f.new
	}
	db.proc = new(db.sql)
	for _, a := range accounts {
		db.initial[a.ID] = a.Balance
	}
	r.opened = append(r.opened, db)
	return db
}

// reseed gives a kept database to run r as if it were new (Server.reseed).
func (db *DB) reseed(r *Run, accounts []Account) {
	db.releaseStalls()
	if err := db.pg.srv.reseed(db.pg.schema, accounts); err != nil {
		r.tb.Fatalf("reseeding %s: %v", db.Path, err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.run = r
	db.initial = map[int64]int64{}
	for _, a := range accounts {
		db.initial[a.ID] = a.Balance
	}
	db.faults, db.pages, db.answers, db.sched = nil, 0, nil, nil
	clear(db.steps)
	clear(db.blinded)
}

// closeServer keeps a child run's database for the next child (see
// openServer); the root run closes its own and every kept one.
func (r *Run) closeServer(db *DB) error {
	db.releaseStalls()
	if r != r.pg.root {
		r.pg.mu.Lock()
		r.pg.free[db.pg.seed] = append(r.pg.free[db.pg.seed], db)
		r.pg.mu.Unlock()
		return nil
	}
	return db.closeReally()
}

// closeKept closes the databases the root run r kept for its children.
func (r *Run) closeKept() error {
	var err error
	r.pg.mu.Lock()
	kept := r.pg.free
	r.pg.free = map[string][]*DB{}
	r.pg.mu.Unlock()
	for _, dbs := range kept {
		for _, k := range dbs {
			err = errors.Join(err, k.closeReally())
		}
	}
	return err
}

// closeReally closes the pool and drops the namespace.
func (db *DB) closeReally() error {
	defer db.labCancel()
	if db.snap != nil {
		db.snap.Close()
	}
	if err := db.sql.Close(); err != nil {
		return err
	}
	_, err := db.pg.srv.control.Exec(db.pg.srv.engine.drop(db.pg.schema))
	return err
}

// pollEvery is how often the scheduler asks, in real time, whether a
// released session has parked, finished, or started waiting for a lock. It
// bounds how soon a state is seen, not which state is seen.
const pollEvery = 2 * time.Millisecond

// stuckReal is how long, in real time, a released session on a server may
// be neither parked, finished nor waiting for a lock before the lab gives
// up: far longer than any server timeout the variants set.
const stuckReal = 2 * time.Minute

// awaitReal waits, in real time, until session s has parked before its next
// statement, finished, or — when pid is not 0 — waits for a lock another
// session of the database holds. It reports whether s waits.
func (sc *scheduler) awaitReal(s *session, pid uint32) bool {
	deadline := time.Now().Add(stuckReal)
	for {
		sc.mu.Lock()
		settled := s.parkedAt != nil || s.done
		sc.mu.Unlock()
		if settled {
			return false
		}
		if pid != 0 && sc.db.pg != nil {
			waits, err := sc.db.pg.blocked(pid)
			if err != nil {
				sc.db.run.tb.Fatalf("asking the server whether session %s waits: %v", s.name, err)
			}
			if waits {
				// Seen waiting; but it may have been granted the lock and
				// parked since the query ran. Parked wins.
				sc.mu.Lock()
				settled := s.parkedAt != nil || s.done
				sc.mu.Unlock()
				return !settled
			}
		}
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("lab: session %s has been neither parked, finished nor waiting for a lock for %v", s.name, stuckReal))
		}
		sc.pause()
	}
}

// pause waits, in real time, until a session parks or finishes, or
// pollEvery has passed, whichever comes first.
func (sc *scheduler) pause() {
	select {
	case <-sc.changed:
	case <-time.After(pollEvery):
	}
}

// settleReal is settle on a server: after a step, every waiting session is
// looked at again until it is parked, finished, or still (or again)
// waiting, and once any of them got past its wait, every waiter is looked
// at again, until a round finds none that got past. One round is not
// enough: a waiter that gets past its wait may have freed another. On
// MariaDB a deadlock's victim is rolled back whole on the server, its
// locks granted to the other waiter, before its client reads the 1213 and
// parks before its ROLLBACK; a waiter looked at earlier in that round was
// waiting then and holds its lock now. Left marked waiting, it would be
// missing from the sessions the next decision chooses from, or not,
// depending on which of the two the round looked at first and how fast
// the server rolled back: a replay would meet other choices than the run
// it replays. A round in which every waiter is still waiting began after
// the last one got past, so what it sees no longer changes until the
// scheduler releases a session, unless the waiters wait for each other
// (waitsClosed). With untilProgress (only waiters are left), or when they
// do, it returns once one of them got past its wait, as the server's lock
// timeout or deadlock detector guarantees one will, and every other waiter
// has been looked at after that.
func (sc *scheduler) settleReal(untilProgress bool) {
	deadline := time.Now().Add(stuckReal)
	progressed := false
	for {
		moved := false
		for _, s := range slices.Clone(sc.sessions) {
			sc.mu.Lock()
			waiting, pid := s.waiting, s.pid
			sc.mu.Unlock()
			if !waiting {
				continue
			}
			if !sc.awaitReal(s, pid) {
				sc.mu.Lock()
				s.waiting = false
				sc.mu.Unlock()
				moved = true
			}
		}
		if moved {
			progressed = true
			continue
		}
		if !untilProgress && !sc.waitsClosed() || progressed || !sc.anyWaiting() {
			return
		}
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("lab: sessions %v wait for each other's locks for %v and the server ends none of them", sc.waitingNames(), stuckReal))
		}
		sc.pause()
	}
}

// waitsClosed reports whether two or more sessions wait and every other
// session is outside a transaction or done: then every lock a waiter waits
// for is a waiter's (no other connection holds locks in the DB's own
// database between its statements), the waits form a cycle, and the
// server's deadlock detector ends one of them. Until it has, what the
// waiters are seen doing is not settled: on MariaDB a statement shows LOCK
// WAIT from the moment its lock request is queued, and only then does its
// own thread look for a cycle and pick a victim (lock_wait in
// storage/innobase/lock/lock0lock.cc runs Deadlock::check_and_resolve
// after the request is queued; trx_print_low prints LOCK WAIT while
// trx->lock.wait_lock is set). A look between the two sees both sessions
// of a deadlock waiting; the victim then parks, and the other, granted its
// lock, parks after it, each sooner or later than the next decision looks.
func (sc *scheduler) waitsClosed() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	waiting := 0
	for _, s := range sc.sessions {
		switch {
		case s.waiting:
			waiting++
		case s.inTx && !s.done:
			return false
		}
	}
	return waiting >= 2
}

// whileLocked runs deliver while another connection of the variant's pool
// holds both tables, inbox and accounts, in a transaction it has not ended
// (engine.holdTables), and gives up on the delivery's behalf every time the
// server shows one of its statements waiting: the lab ends the waiting
// statement and leaves the connection open, with pg_cancel_backend on
// PostgreSQL (57014) and KILL QUERY on MariaDB (1317), both busy errors.
// Once the delivery has answered, the other connection rolls back. On a
// server only (Delivery.WhileLocked).
//
// It is what a caller's deadline is on SQLite (Delivery.Within while
// HoldWriteLock holds), without its timing: the statement is ended once
// the wait is seen, the way the scheduler sees waits, never after a delay;
// a context deadline would not do, because both drivers answer a cancelled
// context by closing the connection.
func (db *DB) whileLocked(deliver func() Answer) Answer {
	db.run.tb.Helper()
	if db.pg == nil {
		db.run.tb.Fatalf("Delivery.WhileLocked: on a server only; on SQLite use HoldWriteLock and Delivery.Within")
	}
	eng := db.pg.srv.engine
	statements := eng.holdTables()
	c, release := db.hold("Delivery.WhileLocked", statements, strings.Join(statements, "; "), "its locks")
	var holder int64
	if err := c.QueryRowContext(db.labCtx, eng.sessionQuery()).Scan(&holder); err != nil {
		db.run.tb.Fatalf("Delivery.WhileLocked: %v", err)
	}
	done := make(chan Answer, 1)
	go func() { done <- deliver() }()
	var a Answer
	deadline := time.Now().Add(stuckReal)
	for waiting := true; waiting; {
		select {
		case a = <-done:
			waiting = false
			continue
		case <-time.After(pollEvery):
		}
		n, err := eng.cancelWaiting(db.pg.srv, db.pg.sessions(), holder)
		if err != nil {
			panic(fmt.Sprintf("lab: ending the waits for session %d: %v", holder, err))
		}
		if n > 0 {
			db.run.Transcript.Note("other", eng.cancelName(), "the delivery waits for its locks: ended")
		}
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("lab: a delivery has been neither answered nor seen waiting for %v", stuckReal))
		}
	}
	release()
	return a
}
