package labtest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"idemlab/lab"
	"idemlab/lab/report"
)

// This file is the engine's MariaDB (InnoDB) backend. It is PostgreSQL's
// (postgres.go) with three differences, and shares the rest: the same
// pgTarget and pgDB, the same hooking connector (over go-sql-driver/mysql's
// connector), the same real-time scheduler.
//
//   - A database per DB. MariaDB has no schemas inside a database (a
//     schema is a database), so each DB the run opens is a database of its
//     own, idemlab_<pid>_<n>_<k>, created on the control connection and
//     dropped when the root run closes; a child run's database is kept and
//     reseeded for the next child, as on PostgreSQL.
//   - A session is its connection's CONNECTION_ID(), asked of each new
//     connection by the hooking connector (pidOf).
//   - A wait is seen in SHOW ENGINE INNODB STATUS (waitsMariaDB): the block
//     of the transaction whose "MariaDB thread id" is the session's says
//     "LOCK WAIT". information_schema.INNODB_TRX and INNODB_LOCK_WAITS name
//     the holder too, but they are one cache, refilled only when read after
//     0.1 s without reads: polled as often as the scheduler polls (every
//     pollEvery), or by anyone else on the server that often, they would
//     never show a wait that began after the last refill
//     (mariadb.TestInnoDBTrxIsACache). SHOW ENGINE INNODB STATUS reads
//     InnoDB's lock tables when asked. It does not name the holder: within
//     the DB's own database, no connection but the run's holds locks.
//
// Timeouts are the server's (innodb_lock_wait_timeout, max_statement_time,
// from the variant's DSN), never a cancelled context: the driver answers a
// cancelled context by closing the connection. OpenScheduled opens a
// database with innodb_lock_wait_timeout at its maximum, 100000000 s, and
// max_statement_time 0 (no limit), so that no scheduled wait ends by a
// timer.

// EnvMariaDB names the environment variable that points the lab at a
// MariaDB server, as a go-sql-driver/mysql DSN for a user that may create
// databases and has the PROCESS privilege, e.g.
// idemlab:idemlab@unix(/run/idemlab-mariadb/mariadbd.sock)/idemlab, which
// .ci/mariadb-start prints. Without it the MariaDB tests skip.
const EnvMariaDB = "IDEMLAB_MARIADB"

// untimedLockWait is innodb_lock_wait_timeout for OpenScheduled: the
// largest the server takes, in seconds (about three years).
const untimedLockWait = "100000000"

// ConnectMariaDB connects to the server that IDEMLAB_MARIADB names. It
// returns nil and the reason when the variable is not set. The databases
// the runs open on it are named after the returned Server's name.
func ConnectMariaDB() (*Server, string, error) {
	dsn := os.Getenv(EnvMariaDB)
	if dsn == "" {
		return nil, EnvMariaDB + ` is not set: eval "$(.ci/mariadb-start)" to run the MariaDB suite`, nil
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", EnvMariaDB, err)
	}
	cfg.InterpolateParams = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	// The lab's own reads and writes (setup, reseeds, snapshots) see what
	// is committed now, whatever the server's default level.
	cfg.Params["tx_isolation"] = "'READ-COMMITTED'"
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, "", err
	}
	control := sql.OpenDB(c)
	if err := control.Ping(); err != nil {
		control.Close()
		return nil, "", fmt.Errorf("connecting to %s=%s: %w", EnvMariaDB, dsn, err)
	}
	name := fmt.Sprintf("idemlab_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	return &Server{admin: control, control: control, url: cfg.FormatDSN(), name: name, mariadb: true}, "", nil
}

// NeedMariaDB is ConnectMariaDB for a test: it skips the test with the one
// line that says how to run it when IDEMLAB_MARIADB is not set, fails it
// when the server cannot be reached, and drops what the test left on the
// server when it ends.
func NeedMariaDB(tb testing.TB) *Server {
	tb.Helper()
	srv, why, err := ConnectMariaDB()
	if err != nil {
		tb.Fatal(err)
	}
	if srv == nil {
		tb.Skip(why)
	}
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Errorf("dropping the test's databases: %v", err)
		}
	})
	return srv
}

// closeMariaDB drops every database the runs on s left (a failed test
// leaves its own), and closes the control connection.
func (s *Server) closeMariaDB() error {
	rows, err := s.control.Query(`SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE ?`,
		strings.ReplaceAll(s.name, "_", `\_`)+`\_%`)
	var names []string
	for err == nil && rows.Next() {
		var n string
		err = rows.Scan(&n)
		names = append(names, n)
	}
	if rows != nil {
		err = errors.Join(err, rows.Close())
	}
	for _, n := range names {
		_, e := s.control.Exec("DROP DATABASE IF EXISTS " + n)
		err = errors.Join(err, e)
	}
	return errors.Join(err, s.control.Close())
}

// NewMariaDBRun starts a run of v on srv at the given isolation level.
func NewMariaDBRun(tb testing.TB, v lab.Variant, srv *Server, level lab.Isolation) *Run {
	r := NewRun(tb, v)
	r.pg = &pgTarget{srv: srv, level: level, free: map[string][]*DB{}, root: r}
	return r
}

// MariaDB reports whether r runs on MariaDB, and at which level. (A run on
// MariaDB is a run on a server: Postgres reports the same level, so that
// the scenarios leave out what only SQLite has.)
func (r *Run) MariaDB() (lab.Isolation, bool) {
	if r.pg == nil || !r.pg.srv.mariadb {
		return "", false
	}
	return r.pg.level, true
}

// MariaDBBackend names a MariaDB matrix in reports: "MariaDB READ
// COMMITTED".
func MariaDBBackend(level lab.Isolation) string { return "MariaDB " + strings.ToUpper(string(level)) }

// RunMariaDBCell runs scenario sc against variant v on srv at level, in
// real time, and returns the verdict with its evidence, like
// RunPostgresCell. A variant without a MariaDB description is not run: the
// cell is nil.
func RunMariaDBCell(t *testing.T, sc Scenario, v lab.Variant, srv *Server, level lab.Isolation) *report.Cell {
	if v.MariaDB == nil {
		return nil
	}
	r := NewMariaDBRun(t, v, srv, level)
	t.Cleanup(func() {
		for _, db := range r.opened {
			db.closeReally()
		}
		r.closeKept()
	})
	r.Transcript.Note("", "MariaDB, tx_isolation = "+strings.ToUpper(strings.ReplaceAll(string(level), " ", "-")), "")
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

// openMariaDB creates a database for a new DB, with the variant's MariaDB
// schema and the accounts, and opens the variant's pool on it; or reuses
// one a child run closed, as openPostgres does.
func (r *Run) openMariaDB(accounts []Account, untimed bool) *DB {
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
		reuse.reseedMariaDB(r, accounts)
		r.opened = append(r.opened, reuse)
		return reuse
	}
	srv := r.pg.srv
	name := fmt.Sprintf("%s_%d", srv.name, srv.schemas.Add(1))
	if err := setupMariaDB(srv, name, r.Variant.MariaDB.Schema, accounts); err != nil {
		r.tb.Fatalf("setting up database %s for %s: %v", name, r.Variant.Name, err)
	}
	cfg, err := mysql.ParseDSN(srv.url)
	if err != nil {
		r.tb.Fatalf("%v", err)
	}
	cfg.DBName = name
	delete(cfg.Params, "tx_isolation") // the control connection's; the variant sets its own
	dsn := r.Variant.MariaDB.DSN(cfg.FormatDSN(), r.pg.level)
	cfg, err = mysql.ParseDSN(dsn)
	if err != nil {
		r.tb.Fatalf("the DSN of %s on MariaDB, %q: %v", r.Variant.Name, dsn, err)
	}
	if untimed {
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["innodb_lock_wait_timeout"] = untimedLockWait
		cfg.Params["max_statement_time"] = "0"
		dsn = cfg.FormatDSN()
	}
	db := &DB{
		Path:    name,
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
	db.labCtx.Done()
	r.cell.register(db)
	// The lab's snapshot of the tables, in MariaDB's dialect (CAST AS
	// SIGNED: MariaDB has no CAST AS BIGINT), on the control connection.
	db.snap, err = srv.control.PrepareContext(db.labCtx, `SELECT 0, id, CAST(balance AS SIGNED), '', '', 0 FROM `+name+`.accounts
		UNION ALL
		SELECT 1, 0, CAST(amount AS SIGNED), coalesce(source, '(NULL)'), coalesce(event_id, '(NULL)'),
			coalesce(account_id, 0) FROM `+name+`.inbox`)
	if err != nil {
		r.tb.Fatalf("reading accounts and inbox: %v", err)
	}
	base, err := mysql.NewConnector(cfg)
	if err != nil {
		r.tb.Fatalf("mysql.NewConnector(%q): %v", dsn, err)
	}
	db.sql = sql.OpenDB(&connector{base: base, hooks: db, begin: "BEGIN", pg: db.pg})
	db.own = db.sql
	new := r.Variant.New
	if r.Variant.MariaDB.New != nil {
		new = r.Variant.MariaDB.New
	}
	db.proc = new(db.sql)
	for _, a := range accounts {
		db.initial[a.ID] = a.Balance
	}
	r.opened = append(r.opened, db)
	return db
}

// setupMariaDB creates database name and, in it, the tables and accounts,
// as a migration would before the service starts.
func setupMariaDB(srv *Server, name string, schema []string, accounts []Account) error {
	ctx := context.Background()
	c, err := srv.control.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4"); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, "USE "+name); err != nil {
		return err
	}
	for _, st := range schema {
		if _, err := c.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
	}
	for _, a := range accounts {
		if _, err := c.ExecContext(ctx, `INSERT INTO accounts (id, balance) VALUES (?, ?)`, a.ID, a.Balance); err != nil {
			return fmt.Errorf("account %d: %w", a.ID, err)
		}
	}
	return nil
}

// reseedMariaDB is reseed on MariaDB: the tables emptied and the accounts
// written again on the control connection, and the DB given to run r as
// if it were new.
//
// The tables are emptied with TRUNCATE TABLE, which makes each table anew,
// and not with DELETE, which leaves its rows delete-marked in the indexes
// until InnoDB's purge thread removes them, at its own pace. A
// delete-marked row is still a record that an INSERT's locks meet, so the
// locks a delivery takes, and which of two deadlocked transactions InnoDB
// rolls back, likely depend on how far purge has got: emptied by DELETE,
// DistinctRace's replays diverged from the runs they replayed in 7 of 24
// cells (8 runs of three levels), with InnoDB rolling back the transaction
// that did not close the cycle; in a new database each time, and emptied
// by TRUNCATE, in none of 24.
func (db *DB) reseedMariaDB(r *Run, accounts []Account) {
	db.releaseStalls()
	ctx := context.Background()
	name := db.pg.schema
	c, err := db.pg.srv.control.Conn(ctx)
	if err != nil {
		r.tb.Fatalf("emptying %s: %v", db.Path, err)
	}
	defer c.Close()
	// foreign_key_checks = 0: TRUNCATE refuses a table another table's
	// foreign key refers to (accounts), even an empty one.
	for _, st := range []string{`SET foreign_key_checks = 0`, `TRUNCATE TABLE ` + name + `.inbox`,
		`TRUNCATE TABLE ` + name + `.accounts`, `SET foreign_key_checks = 1`} {
		if _, err := c.ExecContext(ctx, st); err != nil {
			r.tb.Fatalf("emptying %s: %s: %v", db.Path, st, err)
		}
	}
	for _, a := range accounts {
		if _, err := c.ExecContext(ctx, `INSERT INTO `+name+`.accounts (id, balance) VALUES (?, ?)`, a.ID, a.Balance); err != nil {
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

// connectionID returns the server's id of a MariaDB connection,
// CONNECTION_ID(), the "MariaDB thread id" of SHOW ENGINE INNODB STATUS;
// 0 when it cannot be asked.
func connectionID(c driver.Conn) uint32 {
	q, ok := c.(driver.QueryerContext)
	if !ok {
		return 0
	}
	rows, err := q.QueryContext(context.Background(), "SELECT CONNECTION_ID()", nil)
	if err != nil {
		return 0
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil && err != io.EOF {
		return 0
	}
	switch id := v[0].(type) {
	case int64:
		return uint32(id)
	case uint64:
		return uint32(id)
	case []byte:
		var n uint32
		fmt.Sscan(string(id), &n)
		return n
	}
	return 0
}

// waitsMariaDB is the scheduler's wait detector on MariaDB: it asks the
// server, on the control connection ctl, whether the connection id waits
// for a lock. Every call asks again.
func waitsMariaDB(ctl *sql.DB, id int64) (bool, error) {
	var typ, name, status string
	if err := ctl.QueryRow("SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		return false, err
	}
	return lockWaitIn(status, id), nil
}

// lockWaitIn reports whether the TRANSACTIONS section of SHOW ENGINE
// INNODB STATUS's text shows connection id in LOCK WAIT. Only that
// section is read: LATEST DETECTED DEADLOCK, before it, describes
// transactions long gone in the same words.
func lockWaitIn(status string, id int64) bool {
	i := strings.Index(status, "\nTRANSACTIONS\n")
	if i < 0 {
		return false
	}
	thread := fmt.Sprintf("MariaDB thread id %d,", id)
	for _, block := range strings.Split(status[i:], "---TRANSACTION ")[1:] {
		if strings.Contains(block, thread) {
			return strings.Contains(block, "LOCK WAIT")
		}
	}
	return false
}
