package labtest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"idemlab/lab"
	"idemlab/lab/report"
)

// This file is the engine's PostgreSQL backend. A Run on PostgreSQL opens
// each database as a schema of its own in a database the lab created for
// the test process, connects to it through pgx's database/sql connector
// wrapped in the same hooking connector as SQLite's, and runs the
// scheduler in real time.
//
// Real time, because a session waiting for a lock on PostgreSQL waits on a
// network socket, which a synctest bubble does not count as durably
// blocked. So a scheduled step is complete when its session parks before
// its next statement, finishes, or is seen waiting for a lock held by
// another session of the test — seen the way PostgreSQL's isolationtester
// sees it, by asking the server from a control connection:
//
//	SELECT EXISTS (SELECT 1 FROM unnest(pg_blocking_pids($1)) p WHERE p = ANY($2))
//
// The control connection is polled until one of the three is true: polling
// detects a state, it never decides one, so no verdict depends on how long
// anything took. Timeouts are the server's (lock_timeout, statement_timeout,
// from the variant's DSN), never a cancelled context: pgx answers a
// cancelled context by closing the connection, which would change what the
// test observes. A database whose deliveries the scheduler runs is opened
// without them (OpenScheduled), so that no scheduled wait can end by a
// timer on a slow machine: it ends when the scheduler steps its holder.

// EnvPostgres names the environment variable that points the lab at a
// PostgreSQL server, as a pgx connection string for a database the lab may
// connect to as a role allowed to create databases, e.g.
// postgres:///postgres?host=/var/run/postgresql. Without it the PostgreSQL
// tests skip.
const EnvPostgres = report.EnvPostgres

// Server is the PostgreSQL database the lab works in: created by
// connectPostgres for this test process, dropped by Close.
type Server struct {
	admin   *sql.DB // the server's maintenance database: CREATE and DROP DATABASE
	control *sql.DB // the lab's database, unhooked: schemas, seeds, the waiting check
	url     string  // the lab's database
	name    string
	schemas atomic.Int64
	mariadb bool // a MariaDB server (mariadb.go): databases, not schemas
}

// connectPostgres connects to the server that IDEMLAB_PG names and creates
// a database for this process. It returns nil and the reason when the
// variable is not set.
func connectPostgres() (*Server, string, error) {
	dsn := os.Getenv(EnvPostgres)
	if dsn == "" {
		return nil, EnvPostgres + " is not set: set it to a PostgreSQL connection string (e.g. postgres:///postgres?host=/var/run/postgresql) to run the PostgreSQL suite", nil
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, "", err
	}
	name := fmt.Sprintf("idemlab_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		return nil, "", fmt.Errorf("CREATE DATABASE %s on %s=%s: %w", name, EnvPostgres, dsn, err)
	}
	// The lab kills no server, so its commits need not wait for the disk:
	// every interleaving sets up a schema of its own, and a synchronous
	// commit per DDL statement would cost more than the scenario.
	if _, err := admin.Exec("ALTER DATABASE " + name + " SET synchronous_commit = off"); err != nil {
		admin.Close()
		return nil, "", err
	}
	u, err := withDatabase(dsn, name)
	if err != nil {
		admin.Close()
		return nil, "", err
	}
	control, err := sql.Open("pgx", u)
	if err != nil {
		admin.Close()
		return nil, "", err
	}
	return &Server{admin: admin, control: control, url: u, name: name}, "", nil
}

// NeedPostgres is connectPostgres for a test: it skips the test with the
// one line that says how to run it when IDEMLAB_PG is not set, fails it
// when the server cannot be reached, and drops the test's database when
// the test ends.
func NeedPostgres(tb testing.TB) *Server {
	tb.Helper()
	srv, why, err := connectPostgres()
	if err != nil {
		tb.Fatal(err)
	}
	if srv == nil {
		tb.Skip(why)
	}
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Errorf("dropping the test's database: %v", err)
		}
	})
	return srv
}

// withDatabase returns the connection string dsn with its database
// replaced by name. Both URL and keyword/value forms are accepted; the
// result is a URL.
func withDatabase(dsn, name string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", err
	}
	u := &url.URL{Scheme: "postgres", Path: "/" + name}
	q := url.Values{}
	if cfg.Host != "" && cfg.Host[0] == '/' {
		q.Set("host", cfg.Host)
	} else {
		u.Host = fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	}
	if cfg.User != "" {
		if cfg.Password != "" {
			u.User = url.UserPassword(cfg.User, cfg.Password)
		} else {
			u.User = url.User(cfg.User)
		}
	}
	if cfg.Host != "" && cfg.Host[0] == '/' {
		q.Set("port", fmt.Sprint(cfg.Port))
	}
	q.Set("sslmode", "disable")
	if sm := cfgSSLMode(dsn); sm != "" {
		q.Set("sslmode", sm)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// cfgSSLMode returns the sslmode a URL connection string asks for, or "".
func cfgSSLMode(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return u.Query().Get("sslmode")
}

// Close drops the lab's database.
func (s *Server) Close() error {
	if s.mariadb {
		return s.closeMariaDB()
	}
	s.control.Close()
	_, err := s.admin.Exec("DROP DATABASE IF EXISTS " + s.name + " WITH (FORCE)")
	return errors.Join(err, s.admin.Close())
}

// URL returns the connection string of the lab's database, for a process
// of the test's own (a receiver it starts, say) to connect to. The
// database is empty until the test creates what it needs in it.
func (s *Server) URL() string { return s.url }

// Version returns the server's version string.
func (s *Server) Version() string {
	var v string
	query := "SHOW server_version"
	if s.mariadb {
		query = "SELECT VERSION()"
	}
	if err := s.control.QueryRow(query).Scan(&v); err != nil {
		return "unknown: " + err.Error()
	}
	return v
}

// pgTarget is where a Run on PostgreSQL opens its databases. A run and
// its children (one per interleaving, per fault case) share it.
type pgTarget struct {
	srv   *Server
	level lab.Isolation

	mu   sync.Mutex
	free map[string][]*DB // databases a child closed, by seed, for the next child
	root *Run             // the run whose Close really closes them
}

// NewPostgresRun starts a run of v on srv at the given isolation level.
func NewPostgresRun(tb testing.TB, v lab.Variant, srv *Server, level lab.Isolation) *Run {
	r := NewRun(tb, v)
	r.pg = &pgTarget{srv: srv, level: level, free: map[string][]*DB{}, root: r}
	return r
}

// Postgres reports whether r runs on PostgreSQL, and at which level.
func (r *Run) Postgres() (lab.Isolation, bool) {
	if r.pg == nil {
		return "", false
	}
	return r.pg.level, true
}

// RunPostgresCell runs scenario sc against variant v on srv at level, in
// real time (see the top of this file), and returns the verdict with its
// evidence, like RunCell. A variant without a PostgreSQL description is not
// run: the cell is nil.
func RunPostgresCell(t *testing.T, sc Scenario, v lab.Variant, srv *Server, level lab.Isolation) *report.Cell {
	if v.Postgres == nil {
		return nil
	}
	r := NewPostgresRun(t, v, srv, level)
	t.Cleanup(func() {
		// A lab failure (Fatalf) skips r.Close: the server's connections
		// must still go back.
		for _, db := range r.opened {
			db.closeReally()
		}
		r.closeKept()
	})
	r.Transcript.Note("", "PostgreSQL, default_transaction_isolation = "+string(level), "")
	sc.Run(r)
	r.Close()
	return &report.Cell{
		Pass:         !r.Failed(),
		Neutral:      r.Neutral(),
		Detail:       r.Detail(),
		Failures:     r.Failures(),
		Where:        r.Where(),
		ByLab:        r.ByLab(),
		Lines:        r.Transcript.Lines(),
		Transcript:   r.Transcript.String(),
		Permutations: r.Permutations,
	}
}

// pgDB is what a DB on PostgreSQL keeps besides the pool: its schema, and
// the server process ids of its connections, the sessions whose waits the
// scheduler looks for.
type pgDB struct {
	srv    *Server
	schema string
	seed   string // the accounts it was set up with, and untimed
	// untimed: opened by OpenScheduled, without the variant's lock_timeout
	// and statement_timeout
	untimed bool
	mu      sync.Mutex
	pids    []uint32
	// starvedOnce: starved has reported this database
	starvedOnce bool
	// script, when set, answers for the server as the wait detector: a
	// test's server whose answers come in an order of its choosing.
	script func(pid uint32) (bool, error)
}

// connected records a new connection's server process.
func (p *pgDB) connected(pid uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pids = append(p.pids, pid)
}

// blocked reports whether the server process pid waits for a lock that
// one of the database's other connections holds.
func (p *pgDB) blocked(pid uint32) (bool, error) {
	p.mu.Lock()
	pids := make([]int64, len(p.pids))
	for i, x := range p.pids {
		pids[i] = int64(x)
	}
	p.mu.Unlock()
	if p.script != nil {
		return p.script(pid)
	}
	if p.srv.mariadb {
		return waitsMariaDB(p.srv.control, int64(pid))
	}
	return waitsFor(p.srv.control, int64(pid), pids)
}

// waitsFor is the scheduler's wait detector: it asks the server, on the
// control connection ctl, whether the server process pid waits for a lock
// that one of the processes among holds, the way PostgreSQL's
// isolationtester asks. Every call asks again: a session seen waiting a
// moment ago may hold its lock now. Only the test's own sessions count: a
// lock held by another client of the server (autovacuum, a psql, another
// test) is not a step the scheduler can take, and a session waiting for
// one is not waiting for the schedule. TestPostgresWaitDetector holds it,
// and the wrong detectors it must not be, to those three points.
func waitsFor(ctl *sql.DB, pid int64, among []int64) (bool, error) {
	var yes bool
	err := ctl.QueryRow(
		`SELECT EXISTS (SELECT 1 FROM unnest(pg_blocking_pids($1)) p WHERE p = ANY($2))`,
		pid, among).Scan(&yes)
	return yes, err
}

// openPostgres creates a schema for a new database, with the variant's
// PostgreSQL schema and the accounts, and opens the variant's pool on it.
//
// Enumerating interleavings opens a database per interleaving; setting one
// up costs more than running it. So a database a child run has closed is
// kept, with its pool, and the next child that asks for the same seed gets
// it back emptied and reseeded: the same tables, rows and connection
// settings as a new one, and nothing left of the last case (the inbox and
// accounts are rewritten, faults, answers and step counts forgotten).
func (r *Run) openPostgres(accounts []Account, untimed bool) *DB {
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
	name := fmt.Sprintf("lab_%d", srv.schemas.Add(1))
	if err := setupPostgres(srv, name, r.Variant.Postgres.Schema, accounts); err != nil {
		r.tb.Fatalf("setting up schema %s for %s: %v", name, r.Variant.Name, err)
	}
	u, err := url.Parse(srv.url)
	if err != nil {
		r.tb.Fatalf("%v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	dsn := r.Variant.Postgres.DSN(u.String(), r.pg.level)
	if untimed {
		dsn = withoutTimeouts(dsn)
	}
	db := &DB{
		Path:    srv.name + "." + name,
		run:     r,
		dsn:     dsn,
		initial: map[int64]int64{},
		steps:   map[string]int{},
		txs:     map[string][]*openTx{},
		busy:    map[string]int{},
		cancels: map[string]context.CancelFunc{},
		blinded: map[string]bool{},
		pg:      &pgDB{srv: srv, schema: name, seed: seed, untimed: untimed},
	}
	db.txEnded.L = &db.mu
	db.labCtx, db.labCancel = context.WithCancel(context.Background())
	db.labCtx.Done() // made now, inside the cell's bubble (none on PostgreSQL)
	r.cell.register(db)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		r.tb.Fatalf("pgx.ParseConfig(%q): %v", dsn, err)
	}
	db.sql = sql.OpenDB(&connector{base: stdlib.GetConnector(*cfg), hooks: db, begin: "BEGIN", pg: db.pg})
	db.own = db.sql
	new := r.Variant.New
	if r.Variant.Postgres.New != nil {
		new = r.Variant.Postgres.New
	}
	db.proc = new(db.sql)
	for _, a := range accounts {
		db.initial[a.ID] = a.Balance
	}
	r.opened = append(r.opened, db)
	return db
}

// withoutTimeouts returns the variant's connection string dsn with
// lock_timeout and statement_timeout set to 0, which PostgreSQL reads as no
// limit (see OpenScheduled). The rest of the variant's settings, its
// isolation level first, stay as the variant chose them.
func withoutTimeouts(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn // pgx reports the malformed string itself
	}
	q := u.Query()
	q.Set("lock_timeout", "0")
	q.Set("statement_timeout", "0")
	// A space must be %20: pgx does not read a + in a query as a space.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// setupPostgres creates schema name and, in it, the tables and accounts,
// as a migration would before the service starts.
func setupPostgres(srv *Server, name, schema string, accounts []Account) error {
	ctx := context.Background()
	c, err := srv.control.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "CREATE SCHEMA "+name+"; SET search_path = "+name); err != nil {
		return err
	}
	defer c.ExecContext(ctx, "RESET search_path")
	if _, err := c.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	for _, a := range accounts {
		if _, err := c.ExecContext(ctx, `INSERT INTO accounts (id, balance) VALUES ($1, $2)`, a.ID, a.Balance); err != nil {
			return fmt.Errorf("account %d: %w", a.ID, err)
		}
	}
	return nil
}

// reseed gives a kept database to run r as if it were new.
//
// It writes on the control connection, at READ COMMITTED, as setupPostgres
// does: the variant's pool would write at the variant's isolation level,
// and at SERIALIZABLE take predicate locks of the lab's own.
func (db *DB) reseed(r *Run, accounts []Account) {
	db.releaseStalls()
	ctl, schema := db.pg.srv.control, db.pg.schema
	if _, err := ctl.Exec(`DELETE FROM ` + schema + `.inbox; DELETE FROM ` + schema + `.accounts`); err != nil {
		r.tb.Fatalf("emptying %s: %v", db.Path, err)
	}
	for _, a := range accounts {
		if _, err := ctl.Exec(`INSERT INTO `+schema+`.accounts (id, balance) VALUES ($1, $2)`, a.ID, a.Balance); err != nil {
			r.tb.Fatalf("account %d: %v", a.ID, err)
		}
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

// closePostgres keeps a child run's database for the next child (see
// openPostgres); the root run closes its own and every kept one.
func (r *Run) closePostgres(db *DB) error {
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

// closeReally closes the pool and drops the schema.
func (db *DB) closeReally() error {
	defer db.labCancel()
	if db.snap != nil {
		db.snap.Close()
	}
	if err := db.sql.Close(); err != nil {
		return err
	}
	return db.dropPostgres()
}

// dropPostgres removes a database's schema once its pool is closed.
func (db *DB) dropPostgres() error {
	if db.pg.srv.mariadb {
		_, err := db.pg.srv.control.Exec("DROP DATABASE IF EXISTS " + db.pg.schema)
		return err
	}
	_, err := db.pg.srv.control.Exec("DROP SCHEMA " + db.pg.schema + " CASCADE")
	return err
}

// pidOf returns the server process of a pgx connection, or, for another
// driver's (MariaDB's), its CONNECTION_ID().
func pidOf(c driver.Conn) uint32 {
	if pc, ok := c.(*stdlib.Conn); ok {
		return pc.Conn().PgConn().PID()
	}
	return connectionID(c)
}

// pollEvery is how often the scheduler asks, in real time, whether a
// released session has parked, finished, or started waiting for a lock. It
// bounds how soon a state is seen, not which state is seen.
const pollEvery = 2 * time.Millisecond

// stuckReal is how long, in real time, a released PostgreSQL session may be
// neither parked, finished nor waiting for a lock before the lab gives up:
// far longer than any server timeout the variants set.
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
		select {
		case <-sc.changed:
		case <-time.After(pollEvery):
		}
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
// scheduler releases a session. With untilProgress (only waiters are
// left), it returns once one of them got past its wait, as the server's
// lock timeout or deadlock detector guarantees one will, and every other
// waiter has been looked at after that.
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
		if !untilProgress || progressed || !sc.anyWaiting() {
			return
		}
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("lab: sessions %v wait for each other's locks for %v and the server ends none of them", sc.waitingNames(), stuckReal))
		}
		select {
		case <-sc.changed:
		case <-time.After(pollEvery):
		}
	}
}

// AttemptWhileLocked delivers e while another connection holds the locks
// that statements take, in a transaction it has not ended, and gives up on the delivery's behalf every time the server shows
// one of its statements waiting for that connection: the lab cancels the
// waiting statement with pg_cancel_backend, which fails it with 57014, a
// busy error, and leaves the connection open. Once the delivery has
// answered, the other connection rolls back. On PostgreSQL only.
//
// It is what a caller's deadline is on SQLite (AttemptWithin while
// HoldWriteLock holds), without its timing: the cancel is sent once the
// wait is seen, the way the scheduler sees waits, never after a delay; a
// context deadline would not do, because pgx answers a cancelled context
// by closing the connection.
func (db *DB) AttemptWhileLocked(e lab.Event, statements ...string) Answer {
	db.run.tb.Helper()
	if db.pg == nil {
		db.run.tb.Fatalf("AttemptWhileLocked: on PostgreSQL only; on SQLite use HoldWriteLock and AttemptWithin")
	}
	ctx := context.Background()
	c, err := db.sql.Conn(ctx)
	if err != nil {
		db.run.tb.Fatalf("AttemptWhileLocked: %v", err)
	}
	defer c.Close()
	var holder int64
	if err := c.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&holder); err != nil {
		db.run.tb.Fatalf("AttemptWhileLocked: %v", err)
	}
	for _, st := range append([]string{"BEGIN"}, statements...) {
		if _, err := c.ExecContext(ctx, st); err != nil {
			db.run.tb.Fatalf("AttemptWhileLocked: %s: %v", st, err)
		}
	}
	db.run.Transcript.Note("other", "BEGIN; "+strings.Join(statements, "; "), "holds its locks")
	done := make(chan Answer, 1)
	go func() { done <- db.Attempt(e) }()
	var a Answer
	deadline := time.Now().Add(stuckReal)
	for waiting := true; waiting; {
		select {
		case a = <-done:
			waiting = false
			continue
		case <-time.After(pollEvery):
		}
		if n := db.pg.cancelBlockedBy(holder); n > 0 {
			db.run.Transcript.Note("other", "pg_cancel_backend", "the delivery waits for its locks: cancelled")
		}
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("lab: a delivery has been neither answered nor seen waiting for %v", stuckReal))
		}
	}
	if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
		db.run.tb.Fatalf("AttemptWhileLocked: ROLLBACK: %v", err)
	}
	db.run.Transcript.Note("other", "ROLLBACK", "releases its locks")
	return a
}

// interference describes what of the server's state, shared with its other
// clients, can change PostgreSQL's answers on a schedule the lab repeats,
// and says what to do, for a failure of the lab's. At SERIALIZABLE, the
// predicate locks of every serializable transaction on the server come from
// one table in shared memory (room for max_pred_locks_per_transaction ×
// (max_connections + max_prepared_transactions) objects), and a committed
// transaction's locks are kept until the read-write transactions that
// overlapped it have ended (PostgreSQL's "Transaction Isolation" chapter).
// One long-running serializable transaction elsewhere, not declared READ
// ONLY, keeps them all, until the table is
// full and statements fail with 53200 "out of shared memory" (a
// long-running one on this machine did that to the lab, in the middle of
// an interleaving it had run cleanly before). The text is wrapped to
// TranscriptWidth.
func (p *pgDB) interference(serializable bool) string {
	if p.srv.mariadb {
		return ""
	}
	var locks int
	var oldest string
	err := p.srv.control.QueryRow(`SELECT (SELECT count(*) FROM pg_locks WHERE mode = 'SIReadLock'),
		coalesce((SELECT (now() - min(xact_start))::text FROM pg_stat_activity
			WHERE xact_start IS NOT NULL AND pid <> pg_backend_pid()), 'none')`).Scan(&locks, &oldest)
	if err != nil {
		return "\n(asking the server what else it runs failed: " + err.Error() + ")"
	}
	hint := fmt.Sprintf("The server's oldest open transaction began %s ago. Run the suite on a server "+
		"nothing else is using.", oldest)
	if serializable {
		hint = fmt.Sprintf("PostgreSQL's answers at SERIALIZABLE depend on every other serializable "+
			"transaction on the server: one long-running transaction keeps every predicate lock taken "+
			"since it began, until statements fail with 53200 out of shared memory. The server holds %d "+
			"predicate locks now. %s", locks, hint)
	}
	return "\n" + strings.Join(wrapWords(hint, TranscriptWidth, 0), "\n")
}

// starved fails the test, once per database, when a statement of a
// delivery fails for the server's lack of resources (SQLSTATE class 53: out of shared memory,
// too many connections): an answer no handler chose, which says nothing of
// the variant and would make its verdict the server's.
func (p *pgDB) starved(tb testing.TB, err error) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Code, "53") {
		return
	}
	p.mu.Lock()
	first := !p.starvedOnce
	p.starvedOnce = true
	p.mu.Unlock()
	if first {
		tb.Errorf("lab: the server refused a statement for lack of resources (%s, SQLSTATE %s):\n"+
			"the verdict would be the server's, not the variant's.%s",
			pe.Message, pe.Code, p.interference(pe.Code == "53200"))
	}
}

// cancelBlockedBy cancels the statement of every connection of the
// database that waits for a lock the server process holder holds, and
// returns how many it cancelled.
func (p *pgDB) cancelBlockedBy(holder int64) int {
	p.mu.Lock()
	pids := make([]int64, len(p.pids))
	for i, x := range p.pids {
		pids[i] = int64(x)
	}
	p.mu.Unlock()
	var n int
	err := p.srv.control.QueryRow(`SELECT count(*) FILTER (WHERE pg_cancel_backend(p::int))
		FROM unnest($1::bigint[]) p WHERE $2::int = ANY(pg_blocking_pids(p::int))`, pids, holder).Scan(&n)
	if err != nil {
		panic(fmt.Sprintf("lab: cancelling the waits on server process %d: %v", holder, err))
	}
	return n
}
