package mariadb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// envMariaDB names the environment variable that points the facts at a
// MariaDB server: a go-sql-driver DSN such as
// idemlab:idemlab@unix(/run/idemlab-mariadb/mariadbd.sock)/idemlab.
const envMariaDB = "IDEMLAB_MARIADB"

// howToRun is the one line printed when envMariaDB is not set.
const howToRun = envMariaDB + " is not set: the MariaDB facts and server tests skip; to run them, " +
	`eval "$(.ci/mariadb-start)" && go test ./mariadb -v`

// TestMain prints, once, how to run the tests that need a server when
// envMariaDB is not set; each of them then skips, and the package's tests
// of DSN, Classify and Retry, which need none, run as ever.
func TestMain(m *testing.M) {
	if os.Getenv(envMariaDB) == "" {
		fmt.Println("mariadb: " + howToRun)
	}
	os.Exit(m.Run())
}

// schema is the kit's schema (correct.Schema) in MariaDB's dialect: BIGINT
// for SQLite's INTEGER, VARCHAR(128) for TEXT (an index needs a length),
// OCTET_LENGTH for octet_length (VARCHAR counts characters, the key's
// limit is in bytes: correct.MariaDBSchema), InnoDB for the foreign key and
// the transactions.
// The key columns compare as bytes (utf8mb4_nopad_bin): under the server's
// default collation 'evt_A' and 'evt_a ' are duplicates of 'evt_a'
// (TestKeyCollation).
var schema = []string{`
CREATE TABLE accounts (
	id      BIGINT PRIMARY KEY,
	balance BIGINT NOT NULL DEFAULT 0
	        CHECK (balance BETWEEN 0 AND 1000000000000000)
) ENGINE=InnoDB`, `
CREATE TABLE inbox (
	source     VARCHAR(128) NOT NULL CHECK (OCTET_LENGTH(source) BETWEEN 1 AND 128),
	event_id   VARCHAR(128) NOT NULL CHECK (OCTET_LENGTH(event_id) BETWEEN 1 AND 128),
	account_id BIGINT NOT NULL,
	amount     BIGINT NOT NULL CHECK (amount BETWEEN 1 AND 1000000000),
	PRIMARY KEY (source, event_id),
	FOREIGN KEY (account_id) REFERENCES accounts (id)
) ENGINE=InnoDB CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`}

// MariaDB's error numbers the facts meet
// (https://mariadb.com/kb/en/mariadb-error-code-reference/).
const (
	erCheckRead       = 1020 // ER_CHECKREAD: Record has changed since last read
	erDupEntry        = 1062 // ER_DUP_ENTRY: Duplicate entry … for key
	erBadNull         = 1048 // ER_BAD_NULL_ERROR: Column … cannot be null
	erLockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT
	erLockDeadlock    = 1213 // ER_LOCK_DEADLOCK
	erOutOfRange      = 1264 // ER_WARN_DATA_OUT_OF_RANGE
	erDataTruncated   = 1265 // WARN_DATA_TRUNCATED
	erTruncatedValue  = 1366 // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: Incorrect integer value
	erDataTooLong     = 1406 // ER_DATA_TOO_LONG
	erInterrupted     = 1317 // ER_QUERY_INTERRUPTED: Query execution was interrupted
	erStatementTime   = 1969 // ER_STATEMENT_TIMEOUT: … (max_statement_time exceeded)
	erNoReferencedRow = 1452 // ER_NO_REFERENCED_ROW_2: a foreign key constraint fails
	erConstraintFail  = 4025 // ER_CONSTRAINT_FAILED: CONSTRAINT … failed (a CHECK)
)

// server is the MariaDB server envMariaDB names, with a database of the
// test's own.
type server struct {
	t    *testing.T
	cfg  *mysql.Config // the test's database
	ctl  *sql.DB       // the lab's own pool on it: setup, the wait detector, reads after the fact
	name string
}

var databases atomic.Int64

// need connects to the server, creates a database for the test and the
// kit's tables in it, and drops the database when the test ends. Without
// envMariaDB the test skips (TestMain has printed how to run it).
func need(t *testing.T) *server {
	t.Helper()
	dsn := os.Getenv(envMariaDB)
	if dsn == "" {
		t.SkipNow()
	}
	return setUp(t, envMariaDB, dsn)
}

// setUp creates a database for the test on the server dsn (named by the
// environment variable env, for messages), with the kit's tables and two
// accounts, and drops it when the test ends.
func setUp(t *testing.T, env, dsn string) *server {
	t.Helper()
	base, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("mysql.ParseDSN(%s) = %v", env, err)
	}
	admin := openConfig(t, base)
	name := fmt.Sprintf("idemlab_facts_%d_%d", os.Getpid(), databases.Add(1))
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("CREATE DATABASE %s on %s: %v", name, env, err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name); err != nil {
			t.Errorf("DROP DATABASE %s: %v", name, err)
		}
		admin.Close()
	})
	s := at(t, dsn, name)
	for _, st := range schema {
		if _, err := s.ctl.Exec(st); err != nil {
			t.Fatalf("schema: %v", err)
		}
	}
	if _, err := s.ctl.Exec("INSERT INTO accounts (id, balance) VALUES (1, 0), (2, 0)"); err != nil {
		t.Fatalf("accounts: %v", err)
	}
	return s
}

// at returns the database name on the server dsn, which exists already:
// on a Galera cluster, the database another node created.
func at(t *testing.T, dsn, name string) *server {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("mysql.ParseDSN(%q) = %v", dsn, err)
	}
	cfg.DBName = name
	// Arguments go in the statement's text: one round trip, and the
	// statement another connection sees in INNODB_TRX.trx_query is the
	// one that ran, with its values.
	cfg.InterpolateParams = true
	s := &server{t: t, cfg: cfg, name: name}
	s.ctl = s.pool(nil)
	return s
}

// openConfig opens a pool on cfg and closes it when the test ends.
func openConfig(t *testing.T, cfg *mysql.Config) *sql.DB {
	t.Helper()
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("mysql.NewConnector: %v", err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

// pool opens a pool on the test's database; edit, if not nil, changes its
// configuration first (clientFoundRows, say).
func (s *server) pool(edit func(*mysql.Config)) *sql.DB {
	cfg := s.cfg.Clone()
	if edit != nil {
		edit(cfg)
	}
	return openConfig(s.t, cfg)
}

// session is one connection of a pool, stepped by hand: one of the two
// deliveries of a race.
type session struct {
	t    *testing.T
	srv  *server
	name string
	conn *sql.Conn
	id   int64 // CONNECTION_ID(): INNODB_TRX's trx_mysql_thread_id
}

// session takes a connection of its own from db (the control pool if db
// is nil) and runs setup on it, e.g. SET SESSION TRANSACTION ISOLATION
// LEVEL.
func (s *server) session(name string, db *sql.DB, setup ...string) *session {
	s.t.Helper()
	if db == nil {
		db = s.ctl
	}
	c, err := db.Conn(context.Background())
	if err != nil {
		s.t.Fatalf("session %s: %v", name, err)
	}
	s.t.Cleanup(func() { c.Close() })
	ss := &session{t: s.t, srv: s, name: name, conn: c}
	ss.id = ss.int("SELECT CONNECTION_ID()")
	for _, st := range setup {
		ss.exec(st)
	}
	return ss
}

// try runs q on the session and returns what the server answered.
func (ss *session) try(q string, args ...any) (sql.Result, error) {
	return ss.conn.ExecContext(context.Background(), q, args...)
}

// exec runs q and fails the test if it fails.
func (ss *session) exec(q string, args ...any) sql.Result {
	ss.t.Helper()
	res, err := ss.try(q, args...)
	if err != nil {
		ss.t.Fatalf("%s: %s: %v", ss.name, q, err)
	}
	return res
}

// int runs a query that returns one integer.
func (ss *session) int(q string, args ...any) int64 {
	ss.t.Helper()
	var n sql.NullInt64
	if err := ss.conn.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		ss.t.Fatalf("%s: %s: %v", ss.name, q, err)
	}
	return n.Int64
}

// inTx reports whether the session is inside a transaction
// (@@in_transaction), which is how a run tells a statement's rollback from
// the transaction's.
func (ss *session) inTx() bool {
	ss.t.Helper()
	return ss.int("SELECT @@in_transaction") == 1
}

// warning is one row of SHOW WARNINGS.
type warning struct {
	Level string
	Code  uint16
	Msg   string
}

// warnings returns SHOW WARNINGS for the session's last statement.
func (ss *session) warnings() []warning {
	ss.t.Helper()
	rows, err := ss.conn.QueryContext(context.Background(), "SHOW WARNINGS")
	if err != nil {
		ss.t.Fatalf("%s: SHOW WARNINGS: %v", ss.name, err)
	}
	defer rows.Close()
	var ws []warning
	for rows.Next() {
		var w warning
		if err := rows.Scan(&w.Level, &w.Code, &w.Msg); err != nil {
			ss.t.Fatalf("%s: SHOW WARNINGS: %v", ss.name, err)
		}
		ws = append(ws, w)
	}
	if err := rows.Err(); err != nil {
		ss.t.Fatalf("%s: SHOW WARNINGS: %v", ss.name, err)
	}
	return ws
}

// codes returns the codes of ws, as "Warning 1062" and "Error 4025".
func codes(ws []warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, fmt.Sprintf("%s %d", w.Level, w.Code))
	}
	return out
}

// code returns MariaDB's error number of err, or 0 for nil or an error that
// is not the server's.
func code(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// pending is a statement running on a session in the background: the
// statement that may wait for a lock.
type pending struct {
	ss   *session
	q    string
	done chan result
}

type result struct {
	rows int64
	err  error
}

// start runs q on the session in the background.
func (ss *session) start(q string, args ...any) *pending {
	p := &pending{ss: ss, q: q, done: make(chan result, 1)}
	go func() {
		res, err := ss.try(q, args...)
		var n int64 = -1
		if err == nil {
			n, _ = res.RowsAffected()
		}
		p.done <- result{n, err}
	}()
	return p
}

// stuck bounds every wait of a fact's run: far longer than any step takes,
// and shorter than innodb_lock_wait_timeout's default 50 s, so a schedule
// that went wrong fails here, not by the server's timer.
const stuck = 30 * time.Second

// pollEvery is how often the wait detector asks the server. Not faster
// than every 0.1 s: InnoDB fills INNODB_TRX, INNODB_LOCKS and
// INNODB_LOCK_WAITS from one cache, refreshed only when no one has read it
// for 0.1 s, so a faster poll reads the same copy for ever
// (TestInnoDBTrxIsACache). Polling detects a state; it decides none.
const pollEvery = 120 * time.Millisecond

// end waits for the statement to end and returns its rows affected and
// error.
func (p *pending) end() (int64, error) {
	p.ss.t.Helper()
	select {
	case r := <-p.done:
		return r.rows, r.err
	case <-time.After(stuck):
		p.ss.t.Fatalf("%s: %s has not ended after %v", p.ss.name, p.q, stuck)
	}
	return 0, nil
}

// blockers returns the connection ids of the transactions that connection
// id waits for, from the server's view of lock waits: nil if it waits for
// none. It is the scheduler's question, asked the way sys.innodb_lock_waits
// asks it.
func (s *server) blockers(id int64) []int64 {
	s.t.Helper()
	rows, err := s.ctl.Query(`
		SELECT b.trx_mysql_thread_id
		FROM information_schema.INNODB_TRX r
		JOIN information_schema.INNODB_LOCK_WAITS w ON w.requesting_trx_id = r.trx_id
		JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
		WHERE r.trx_mysql_thread_id = ? AND r.trx_state = 'LOCK WAIT'
		ORDER BY 1`, id)
	if err != nil {
		s.t.Fatalf("asking the server who %d waits for: %v", id, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var b int64
		if err := rows.Scan(&b); err != nil {
			s.t.Fatal(err)
		}
		ids = append(ids, b)
	}
	return ids
}

// waitsFor returns once the server shows p's session waiting for a lock
// that holder's transaction holds. It fails the test if the statement ends
// first, or if neither happens within stuck.
func (p *pending) waitsFor(holder *session) {
	p.ss.t.Helper()
	deadline := time.Now().Add(stuck)
	for {
		select {
		case r := <-p.done:
			p.done <- r
			p.ss.t.Fatalf("%s: %s ended (rows %d, err %v), want it waiting for %s's lock", p.ss.name, p.q, r.rows, r.err, holder.name)
		default:
		}
		if b := p.ss.srv.blockers(p.ss.id); slices.Contains(b, holder.id) {
			return
		}
		if time.Now().After(deadline) {
			p.ss.t.Fatalf("%s: %s neither ended nor waited for %s within %v", p.ss.name, p.q, holder.name, stuck)
		}
		select {
		case r := <-p.done:
			p.done <- r
		case <-time.After(pollEvery):
		}
	}
}

// endsWithoutWaiting returns the statement's result, failing the test if
// the server shows its session waiting for a lock before it ends.
func (p *pending) endsWithoutWaiting() (int64, error) {
	p.ss.t.Helper()
	deadline := time.Now().Add(stuck)
	for {
		select {
		case r := <-p.done:
			return r.rows, r.err
		default:
		}
		if b := p.ss.srv.blockers(p.ss.id); len(b) > 0 {
			p.ss.t.Fatalf("%s: %s waits for the lock of connection %v, want it to run without waiting", p.ss.name, p.q, b)
		}
		if time.Now().After(deadline) {
			p.ss.t.Fatalf("%s: %s has not ended after %v", p.ss.name, p.q, stuck)
		}
		select {
		case r := <-p.done:
			return r.rows, r.err
		case <-time.After(pollEvery):
		}
	}
}

// count returns the number of inbox rows with the key (source, id), read
// on the control pool: what is committed.
func (s *server) count(source, id string) int64 {
	s.t.Helper()
	var n int64
	if err := s.ctl.QueryRow("SELECT COUNT(*) FROM inbox WHERE source = ? AND event_id = ?", source, id).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// balance returns the committed balance of account id.
func (s *server) balance(id int64) int64 {
	s.t.Helper()
	var n int64
	if err := s.ctl.QueryRow("SELECT balance FROM accounts WHERE id = ?", id).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// synced returns s with a control pool whose reads wait for the cluster:
// each of its connections sets wsrep_sync_wait = 1, so a SELECT first
// applies every write set the node has received. On Galera a COMMIT that
// fails certification (1213) can come back before the winner's write set
// has been applied on the loser's node; a plain read there then still
// shows the rows as they were (balance 0, once, in CI). Sessions of s keep
// its own pool.
func (s *server) synced() *server {
	c := *s
	c.ctl = s.pool(func(cfg *mysql.Config) {
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["wsrep_sync_wait"] = "1"
	})
	return &c
}

// variable returns SHOW VARIABLES' value of name, and whether the server
// has it.
func (s *server) variable(name string) (string, bool) {
	s.t.Helper()
	var n, v string
	err := s.ctl.QueryRow("SHOW GLOBAL VARIABLES LIKE ?", name).Scan(&n, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return v, true
}

// insert is the handler's INSERT of an event, without IGNORE.
const insert = `INSERT INTO inbox (source, event_id, account_id, amount) VALUES (?, ?, ?, ?)`

// credit is the handler's UPDATE of the account.
const credit = `UPDATE accounts SET balance = balance + ? WHERE id = ?`

// TestDefaults records the server's defaults that the other facts depend
// on, as SHOW VARIABLES gives them.
//
// Docs: sql_mode's default is STRICT_TRANS_TABLES,
// ERROR_FOR_DIVISION_BY_ZERO, NO_AUTO_CREATE_USER, NO_ENGINE_SUBSTITUTION
// from MariaDB 10.2.4 (https://mariadb.com/kb/en/sql-mode/); REPEATABLE
// READ is InnoDB's default level (https://mariadb.com/kb/en/set-transaction/);
// innodb_rollback_on_timeout defaults to OFF and is not dynamic
// (https://mariadb.com/docs/server/ref/mdb/cli/mariadbd/innodb-rollback-on-timeout);
// innodb_lock_wait_timeout defaults to 50 s. The run agrees. 10.11 names
// the level tx_isolation (transaction_isolation is 11.1's name for it).
func TestDefaults(t *testing.T) {
	s := need(t)
	var version string
	if err := s.ctl.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("server: %s", version)
	for _, c := range []struct{ name, want string }{
		{"sql_mode", "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"},
		{"tx_isolation", "REPEATABLE-READ"},
		{"innodb_rollback_on_timeout", "OFF"},
		{"innodb_lock_wait_timeout", "50"},
		{"innodb_deadlock_detect", "ON"},
		{"autocommit", "ON"},
	} {
		got, ok := s.variable(c.name)
		if !ok {
			t.Errorf("SHOW VARIABLES LIKE %q = no such variable, want %s", c.name, c.want)
			continue
		}
		t.Logf("%s = %s", c.name, got)
		if got != c.want {
			t.Errorf("SHOW VARIABLES LIKE %q = %s, want %s", c.name, got, c.want)
		}
	}
	if v, ok := s.variable("innodb_snapshot_isolation"); ok {
		t.Logf("innodb_snapshot_isolation = %s (TestSnapshotIsolation)", v)
	} else {
		t.Logf("innodb_snapshot_isolation: this server has no such variable")
	}
}

// outcome runs q on the session and describes what happened the way the
// facts compare it: "1 row", "0 rows; Warning 1062", "error 4025; Warning
// 1048, Error 4025" (the error number, then SHOW WARNINGS, which lists the
// error too).
func (ss *session) outcome(q string, args ...any) string {
	ss.t.Helper()
	res, err := ss.try(q, args...)
	var out string
	if err != nil {
		if code(err) == 0 {
			ss.t.Fatalf("%s: %s: %v", ss.name, q, err)
		}
		out = fmt.Sprintf("error %d", code(err))
	} else {
		n, err := res.RowsAffected()
		if err != nil {
			ss.t.Fatal(err)
		}
		out = fmt.Sprintf("%d rows", n)
		if n == 1 {
			out = "1 row"
		}
	}
	if ws := codes(ss.warnings()); len(ws) > 0 {
		out += "; " + strings.Join(ws, ", ")
	}
	return out
}

// TestInsertIgnore: INSERT IGNORE turns a foreign-key failure, and a NOT
// NULL failure, into warnings and "0 rows affected"; it stores a
// truncated value as if it were the one sent, with "1 row affected" and a
// warning; and it does not downgrade a CHECK failure, which stays an error
// (4025). STRICT_TRANS_TABLES, in the default sql_mode, changes none of
// what INSERT IGNORE does; it changes what a plain INSERT does with a
// value that does not fit (an error under it, the value truncated and
// stored without it).
//
// In detail, on the kit's schema: a duplicate key is 0 rows with Warning
// 1062; an unknown account 0 rows with Warning 1452; a NULL account is
// stored as 0 (Warning 1048), which the foreign key then refuses (Warning
// 1452), 0 rows; a NULL amount is stored as 0 (Warning 1048), which the
// CHECK refuses: error 4025. A 200-character event_id is cut to 128 and
// stored: 1 row, Warning 1265. On a table without CHECKs or foreign keys a
// NULL for a NOT NULL column is stored as 0 or an empty string (1 row, Warning 1048).
// (Through the Go driver, SHOW WARNINGS after a plain INSERT's NOT NULL
// error lists a second condition, Error 1105 "Unknown error"; the mariadb
// client shows only the 1048.)
// So "0 rows" after INSERT IGNORE means the key was a duplicate, or the
// account unknown, or (on other tables) any other refusal; and "1 row" does
// not mean the row holds what was sent.
//
// Docs: "By using the IGNORE keyword all errors are converted to warnings"
// and "Invalid values are changed to the closest valid value and inserted,
// with a warning produced" (https://mariadb.com/kb/en/insert-ignore/);
// IGNORE ignores STRICT_TRANS_TABLES and the other strict modes, stores
// NULL in a NOT NULL column as 0 or an empty string, and does not insert rows that break
// a foreign key (https://mariadb.com/kb/en/ignore/, whose list of ignored
// errors has 1048, 1062, 1264, 1265, 1366 and 1452, and not 4025). The run
// disagrees with the first page's "all errors": a CHECK constraint's 4025
// is not converted, on 10.11. (MariaDB changed single-row INSERT IGNORE's
// foreign-key failure from an error to a warning,
// https://github.com/MariaDB/server/pull/2783; 10.11 gives the warning.)
func TestInsertIgnore(t *testing.T) {
	s := need(t)
	a := s.session("A", nil)
	a.exec(insert, "p", "e1", 1, 5)
	a.exec(`CREATE TABLE bare (
		k VARCHAR(32) PRIMARY KEY,
		n BIGINT NOT NULL,
		t VARCHAR(8) NOT NULL
	) ENGINE=InnoDB`)
	const ignore = `INSERT IGNORE INTO inbox (source, event_id, account_id, amount) VALUES ('p', ?, ?, ?)`
	const plain = `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ('p', ?, ?, ?)`
	const bareIgnore = `INSERT IGNORE INTO bare (k, n, t) VALUES (?, ?, ?)`
	const barePlain = `INSERT INTO bare (k, n, t) VALUES (?, ?, ?)`
	type forms struct{ ignore, insert string }
	cases := []struct {
		name   string
		bare   bool  // the table without CHECKs or foreign keys
		dup    bool  // the key is e1's, already in the inbox
		long   bool  // the key is 200 characters long
		vals   []any // the columns after the key
		strict forms // under the default sql_mode
		loose  forms // under sql_mode = ''
	}{
		{"new", false, false, false, []any{1, 5},
			forms{"1 row", "1 row"}, forms{"1 row", "1 row"}},
		{"duplicate key", false, true, false, []any{1, 5},
			forms{"0 rows; Warning 1062", "error 1062; Error 1062"},
			forms{"0 rows; Warning 1062", "error 1062; Error 1062"}},
		{"unknown account (FOREIGN KEY)", false, false, false, []any{99, 5},
			forms{"0 rows; Warning 1452", "error 1452; Error 1452"},
			forms{"0 rows; Warning 1452", "error 1452; Error 1452"}},
		{"NULL account (NOT NULL, then FOREIGN KEY)", false, false, false, []any{nil, 5},
			forms{"0 rows; Warning 1048, Warning 1452", "error 1048; Error 1048, Error 1105"},
			forms{"0 rows; Warning 1048, Warning 1452", "error 1048; Error 1048, Error 1105"}},
		{"NULL amount (NOT NULL, then CHECK)", false, false, false, []any{1, nil},
			forms{"error 4025; Warning 1048, Error 4025", "error 1048; Error 1048, Error 1105"},
			forms{"error 4025; Warning 1048, Error 4025", "error 1048; Error 1048, Error 1105"}},
		{"amount 0 (CHECK)", false, false, false, []any{1, 0},
			forms{"error 4025; Error 4025", "error 4025; Error 4025"},
			forms{"error 4025; Error 4025", "error 4025; Error 4025"}},
		{"amount 'ten' (not a number, then CHECK)", false, false, false, []any{1, "ten"},
			forms{"error 4025; Warning 1366, Error 4025", "error 1366; Error 1366"},
			forms{"error 4025; Warning 1366, Error 4025", "error 4025; Warning 1366, Error 4025"}},
		{"amount 2^64 (out of range, then CHECK)", false, false, false, []any{1, "18446744073709551616"},
			forms{"error 4025; Warning 1264, Error 4025", "error 1264; Error 1264"},
			forms{"error 4025; Warning 1264, Error 4025", "error 4025; Warning 1264, Error 4025"}},
		{"event_id of 200 characters (truncated)", false, false, true, []any{1, 5},
			forms{"1 row; Warning 1265", "error 1406; Error 1406"},
			forms{"1 row; Warning 1265", "1 row; Warning 1265"}},
		{"no CHECK: NULL number (NOT NULL)", true, false, false, []any{nil, "t"},
			forms{"1 row; Warning 1048", "error 1048; Error 1048, Error 1105"},
			forms{"1 row; Warning 1048", "error 1048; Error 1048, Error 1105"}},
		{"no CHECK: NULL text (NOT NULL)", true, false, false, []any{1, nil},
			forms{"1 row; Warning 1048", "error 1048; Error 1048, Error 1105"},
			forms{"1 row; Warning 1048", "error 1048; Error 1048, Error 1105"}},
		{"no CHECK: number 2^64 (out of range)", true, false, false, []any{"18446744073709551616", "t"},
			forms{"1 row; Warning 1264", "error 1264; Error 1264"},
			forms{"1 row; Warning 1264", "1 row; Warning 1264"}},
	}
	modes := []struct{ name, set string }{
		{"the default sql_mode", "SET SESSION sql_mode = DEFAULT"},
		{"sql_mode ''", "SET SESSION sql_mode = ''"},
	}
	// key is the key a case's statement uses: each form under each mode
	// has its own, so that none is another's duplicate.
	key := func(i int, form string, m int) string {
		k := fmt.Sprintf("c%d-%s-%d", i, form, m)
		if cases[i].dup {
			return "e1"
		}
		if cases[i].long {
			return k + strings.Repeat("x", 200-len(k))
		}
		return k
	}
	for i, c := range cases {
		for m, mode := range modes {
			want := c.strict
			if m == 1 {
				want = c.loose
			}
			a.exec(mode.set)
			qi, qn := ignore, plain
			if c.bare {
				qi, qn = bareIgnore, barePlain
			}
			if got := a.outcome(qi, append([]any{key(i, "ignore", m)}, c.vals...)...); got != want.ignore {
				t.Errorf("INSERT IGNORE, %s, under %s = %s, want %s", c.name, mode.name, got, want.ignore)
			}
			if got := a.outcome(qn, append([]any{key(i, "insert", m)}, c.vals...)...); got != want.insert {
				t.Errorf("INSERT, %s, under %s = %s, want %s", c.name, mode.name, got, want.insert)
			}
		}
	}
	a.exec("SET SESSION sql_mode = DEFAULT")

	// What "1 row" stored.
	for i, c := range cases {
		var want string
		switch c.name {
		case "event_id of 200 characters (truncated)":
			want = "account=1 amount=5 event_id of 128 characters"
		case "no CHECK: NULL number (NOT NULL)":
			want = "n=0 t='t'"
		case "no CHECK: NULL text (NOT NULL)":
			want = "n=1 t=''"
		case "no CHECK: number 2^64 (out of range)":
			want = "n=9223372036854775807 t='t'"
		default:
			continue
		}
		q := `SELECT CONCAT('n=', n, ' t=''', t, '''') FROM bare WHERE k = ?`
		if !c.bare {
			q = `SELECT CONCAT('account=', account_id, ' amount=', amount, ' event_id of ', CHAR_LENGTH(event_id), ' characters')
				FROM inbox WHERE source = 'p' AND event_id = LEFT(?, 128)`
		}
		var got string
		if err := s.ctl.QueryRow(q, key(i, "ignore", 0)).Scan(&got); err != nil {
			t.Fatalf("the row INSERT IGNORE stored for %s: %v", c.name, err)
		}
		if got != want {
			t.Errorf("INSERT IGNORE, %s, stored %s, want %s", c.name, got, want)
		}
	}
}

// TestLockWaitTimeout: a lock wait timeout (1205) rolls back only the
// statement that waited. The transaction stays open (@@in_transaction is
// still 1), what it did before stays in it, and COMMIT commits that: a
// delivery that credits the account, then waits for the inbox row another
// delivery holds, then goes on to COMMIT after the 1205 commits the credit
// without its inbox row — half a delivery. innodb_rollback_on_timeout,
// which would roll back the whole transaction instead, is OFF by default
// and cannot be changed while the server runs (TestDefaults); the run
// measures the default only.
//
// Docs: innodb_lock_wait_timeout is how long "an InnoDB transaction may
// wait for a lock before being rolled back"
// (https://mariadb.com/docs/server/ref/mdb/cli/mariadbd/innodb-lock-wait-timeout),
// and innodb_rollback_on_timeout is "Roll back the complete transaction
// on lock wait timeout, for 4.x compatibility (disabled by default)"
// (https://mariadb.com/docs/ent/ref/mdb/system-variables/innodb_rollback_on_timeout/):
// so by default only the statement is rolled back. The run agrees; the
// first page's "the transaction … being rolled back" is the behaviour with
// the option ON.
func TestLockWaitTimeout(t *testing.T) {
	s := need(t)
	a := s.session("A", nil)
	b := s.session("B", nil, "SET SESSION innodb_lock_wait_timeout = 1")

	a.exec("BEGIN")
	a.exec(insert, "p", "e1", 2, 7) // A holds e1 (for account 2: the account B credits stays free)
	b.exec("BEGIN")
	b.exec(credit, 5, 1) // B's credit first, then its inbox row
	p := b.start(insert, "p", "e1", 1, 5)
	p.waitsFor(a)
	_, err := p.end()
	if code(err) != erLockWaitTimeout {
		t.Fatalf("B: %s while A holds e1 = %v, want error %d", insert, err, erLockWaitTimeout)
	}
	t.Logf("B: INSERT e1 = %v", err)
	if !b.inTx() {
		t.Errorf("B: @@in_transaction after 1205 = 0, want 1 (only the statement rolled back)")
	}
	if got := b.int("SELECT balance FROM accounts WHERE id = 1"); got != 5 {
		t.Errorf("B: its own balance after 1205 = %d, want 5 (its credit is still in its transaction)", got)
	}
	if _, err := b.try("COMMIT"); err != nil {
		t.Fatalf("B: COMMIT after 1205 = %v, want it to commit", err)
	}
	a.exec("ROLLBACK")
	if got, n := s.balance(1), s.count("p", "e1"); got != 5 || n != 0 {
		t.Errorf("after B committed past its 1205: balance = %d, inbox rows for e1 = %d; want 5 and 0 (the credit without its inbox row)", got, n)
	}
}

// TestForeignKeyLocksTheAccount: the inbox row's foreign key takes a shared
// lock on the account row, held to the end of the transaction, and the
// credit's UPDATE needs an exclusive one. So two deliveries of two
// different events for the same account, each written as correct's handler
// is (INSERT the inbox row, then UPDATE the account), deadlock when their
// statements interleave: A's UPDATE waits for B's shared lock, and B's
// UPDATE then closes the cycle. One of them gets 1213 (ER_LOCK_DEADLOCK)
// and loses its whole transaction — its inbox row too — and the other
// goes on and commits. A deadlock is not about the event: the same
// handler meets it for distinct events, and must run the delivery again.
//
// Docs: "If a FOREIGN KEY constraint is defined on a table, any insert,
// update, or delete that requires the constraint condition to be checked
// sets shared record-level locks on the records that it looks at to check
// the constraint" (MySQL's "Locks Set by Different SQL Statements in
// InnoDB", https://dev.mysql.com/doc/refman/8.0/en/innodb-locks-set.html;
// the kit found no MariaDB page that says it). On PostgreSQL the foreign
// key takes FOR KEY SHARE, which an UPDATE that leaves the key alone does
// not wait for: there, the same interleaving does not deadlock. The run
// agrees with MySQL's page. (Galera builds take an exclusive lock on the
// parent instead, MariaDB/server commit cc3bee92b6: not measured
// here.)
func TestForeignKeyLocksTheAccount(t *testing.T) {
	s := need(t)
	foreignKeyDeadlock(t, s, s.session("A", nil), s.session("B", nil))
}

// foreignKeyDeadlock runs TestForeignKeyLocksTheAccount's schedule on
// sessions a and b, both connected to the node s.
func foreignKeyDeadlock(t *testing.T, s *server, a, b *session) {
	t.Helper()
	a.exec("BEGIN")
	a.exec(insert, "p", "ea", 1, 5)
	b.exec("BEGIN")
	b.exec(insert, "p", "eb", 1, 7)
	pa := a.start(credit, 5, 1)
	pa.waitsFor(b)
	pb := b.start(credit, 7, 1)
	_, errB := pb.end()
	_, errA := pa.end()
	t.Logf("A: UPDATE = %v; B: UPDATE = %v", errA, errB)
	victim, survivor := b, a
	verr, serr := errB, errA
	if code(errA) == erLockDeadlock {
		victim, survivor, verr, serr = a, b, errA, errB
	}
	if code(verr) != erLockDeadlock || serr != nil {
		t.Fatalf("the two credits: A = %v, B = %v; want one error %d and one success", errA, errB, erLockDeadlock)
	}
	t.Logf("the victim: %s, the session whose UPDATE %s", victim.name, map[bool]string{true: "closed the cycle", false: "waited first"}[victim == b])
	if victim.inTx() {
		t.Errorf("%s: @@in_transaction after 1213 = 1, want 0 (the whole transaction rolled back)", victim.name)
	}
	survivor.exec("COMMIT")
	ev, es := "ea", "eb"
	if victim == b {
		ev, es = "eb", "ea"
	}
	if n := s.count("p", ev); n != 0 {
		t.Errorf("the victim's inbox row %s after 1213: %d rows, want 0", ev, n)
	}
	if n := s.count("p", es); n != 1 {
		t.Errorf("the survivor's inbox row %s: %d rows, want 1", es, n)
	}
}

// TestDeadlock: a deadlock (1213) rolls back the whole transaction, the
// statements before the one that failed included, and leaves the session
// outside any transaction: a statement the handler runs after it (a credit
// it goes on with, having swallowed the error) runs in autocommit and is
// committed at once, and the COMMIT after it commits nothing and succeeds.
// So a handler that swallows a 1213 and carries on commits the credit
// without the inbox row; one that answers it "duplicate" has recorded
// nothing.
//
// Docs: "A transaction deadlock causes InnoDB to roll back the entire
// transaction. Retry the entire transaction when this happens." (MySQL's
// "InnoDB Error Handling",
// https://dev.mysql.com/doc/refman/8.0/en/innodb-error-handling.html);
// MariaDB's error page gives only the message, "Deadlock found when trying
// to get lock; try restarting transaction"
// (https://mariadb.com/docs/all/ref/mdb/error-codes/ER_LOCK_DEADLOCK/).
// Neither says what a statement after it does; the run shows it.
func TestDeadlock(t *testing.T) {
	s := need(t)
	a := s.session("A", nil)
	b := s.session("B", nil)

	// A writes more than B before the cycle, so that InnoDB, which rolls
	// back the transaction of least weight, picks B.
	a.exec("BEGIN")
	a.exec(insert, "p", "a1", 2, 1)
	a.exec(insert, "p", "a2", 2, 1)
	a.exec("UPDATE accounts SET balance = balance + 1 WHERE id = 2")
	b.exec("BEGIN")
	b.exec(insert, "p", "e1", 1, 5) // B's inbox row: what 1213 must take back
	b.exec("UPDATE accounts SET balance = balance + 0 WHERE id = 1")
	pa := a.start("UPDATE accounts SET balance = balance + 1 WHERE id = 1")
	pa.waitsFor(b)
	_, err := b.try("UPDATE accounts SET balance = balance + 5 WHERE id = 2")
	if code(err) != erLockDeadlock {
		t.Fatalf("B: the UPDATE that closes the cycle = %v, want error %d", err, erLockDeadlock)
	}
	t.Logf("B: %v", err)
	if _, err := pa.end(); err != nil {
		t.Fatalf("A: its UPDATE once B is rolled back = %v, want success", err)
	}
	if b.inTx() {
		t.Errorf("B: @@in_transaction after 1213 = 1, want 0")
	}
	if n := b.int("SELECT COUNT(*) FROM inbox WHERE event_id = 'e1'"); n != 0 {
		t.Errorf("B: its inbox row after 1213 = %d rows, want 0 (rolled back with the transaction)", n)
	}
	a.exec("ROLLBACK")
	// A handler that swallowed the error goes on: its credit, its COMMIT.
	b.exec(credit, 5, 1)
	if _, err := b.try("COMMIT"); err != nil {
		t.Errorf("B: COMMIT after 1213 = %v, want success (there is nothing to commit)", err)
	}
	if got, n := s.balance(1), s.count("p", "e1"); got != 5 || n != 0 {
		t.Errorf("after B went on past its 1213: balance = %d, inbox rows for e1 = %d; want 5 and 0 (the credit committed alone)", got, n)
	}
}

// holdTables is what a connection runs to hold both tables the way
// SQLite's write lock holds the file: at REPEATABLE READ, a locking read of
// every row locks every record of the table and every gap between them,
// the gap after the last included, so no row can be inserted, updated or
// locked by another transaction, whatever its own level; plain reads
// (consistent reads, outside SERIALIZABLE) go through.
var holdTables = []string{
	"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", // the next transaction only
	"BEGIN",
	"SELECT source, event_id, account_id, amount FROM inbox FOR UPDATE",
	"SELECT id, balance FROM accounts FOR UPDATE",
}

// readBalance and readMissing are plain reads: of a row holdTables locks,
// and of a key it does not hold, which at SERIALIZABLE takes a shared lock
// on the gap only.
const (
	readBalance = "SELECT balance FROM accounts WHERE id = 2"
	readMissing = "SELECT COUNT(*) FROM inbox WHERE source = 'p' AND event_id = 'e1'"
)

// TestKillQuery: KILL QUERY ends a statement that waits for a lock with
// 1317 (SQLSTATE 70100, "Query execution was interrupted") and leaves the
// connection and its transaction open (@@in_transaction 1), what the
// transaction did before kept in it; max_statement_time ends the same wait
// with 1969 (SQLSTATE 70100), the transaction open too. The holder runs
// holdTables; at every level of the waiter, an INSERT of a new key and the
// credit are seen waiting for it, and so, at SERIALIZABLE only, is a plain
// read of a row it locked; a plain read of a key it does not hold waits at
// no level (at SERIALIZABLE it takes a shared lock on a gap, and locks on
// a gap never conflict). It is what the lab does on MariaDB where it
// cancels a delivery seen waiting (labtest.Delivery.WhileLocked), as
// pg_cancel_backend does on PostgreSQL.
//
// Docs: "KILL QUERY terminates the statement that the connection thread_id
// is currently executing, but leaves the connection itself intact. … If
// only a query is killed, the current transaction will stay active."
// (https://mariadb.com/kb/en/kill); a statement aborted by
// max_statement_time "has no effect on any larger transaction or
// connection contexts" (https://mariadb.com/kb/en/mariadb/aborting-statements/).
// The runs agree. Error 1969's page gives SQLSTATE 70100
// (https://mariadb.com/docs/server/reference/error-codes/mariadb-error-codes-1900-to-1999/e1969).
// That gap locks do not conflict is MySQL's "InnoDB Locking" page: they
// are "purely inhibitive", they "do not prevent different transactions
// from taking gap locks on the same gap"
// (https://dev.mysql.com/doc/refman/8.0/en/innodb-locking.html; the kit
// found no MariaDB page on gap locks); the read of a missing key agrees.
func TestKillQuery(t *testing.T) {
	s := need(t)
	setup := s.session("setup", nil)
	setup.exec(insert, "p", "e0", 1, 5) // a row, and gaps either side of it
	// A table A does not lock: what B did before its wait.
	setup.exec("CREATE TABLE note (n INT) ENGINE=InnoDB")
	for _, level := range []string{"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"} {
		for _, q := range []string{insert, credit, readBalance, readMissing} {
			a := s.session("A", nil)
			for _, st := range holdTables {
				a.exec(st)
			}
			b := s.session("B", nil, levels[level])
			b.exec("BEGIN")
			b.exec("INSERT INTO note VALUES (1)")
			args := []any{"p", "e1", 2, 7}
			if q == credit {
				args = []any{7, 2}
			} else if !strings.HasPrefix(q, "INSERT") {
				args = nil
			}
			p := b.start(q, args...)
			if q == readMissing || q == readBalance && level != "SERIALIZABLE" {
				if _, err := p.endsWithoutWaiting(); err != nil {
					t.Errorf("B at %s: %s while A holds the tables = %v, want it read without waiting", level, q, err)
				}
				b.exec("ROLLBACK")
				a.exec("ROLLBACK")
				continue
			}
			p.waitsFor(a)
			a.exec("KILL QUERY " + strconv.FormatInt(b.id, 10))
			_, err := p.end()
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != erInterrupted || string(me.SQLState[:]) != "70100" {
				t.Errorf("B at %s: %s killed while waiting = %v, want error %d (70100)", level, q, err, erInterrupted)
			}
			if !b.inTx() || b.int("SELECT COUNT(*) FROM note") != 1 {
				t.Errorf("B at %s: after 1317, @@in_transaction = 0 or its note gone, want 1 and its note kept (only the statement ended)", level)
			}
			b.exec("ROLLBACK")
			a.exec("ROLLBACK")
		}
	}

	// max_statement_time ends the same wait with 1969.
	a := s.session("A", nil)
	for _, st := range holdTables {
		a.exec(st)
	}
	b := s.session("B", nil, "SET SESSION max_statement_time = 0.5")
	b.exec("BEGIN")
	b.exec("INSERT INTO note VALUES (2)") // before the wait: kept in the transaction
	_, err := b.try(insert, "p", "e1", 2, 7)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != erStatementTime || string(me.SQLState[:]) != "70100" {
		t.Errorf("B: %s waiting past max_statement_time = %v, want error %d (70100)", insert, err, erStatementTime)
	}
	t.Logf("B: %v", err)
	if !b.inTx() {
		t.Errorf("B: @@in_transaction after 1969 = 0, want 1 (only the statement ended)")
	}
	if n := b.int("SELECT COUNT(*) FROM note WHERE n = 2"); n != 1 {
		t.Errorf("B: its note after 1969 = %d rows, want 1 (still in its transaction)", n)
	}
	b.exec("ROLLBACK")
	a.exec("ROLLBACK")
}

// levels maps the names the facts use to SET SESSION TRANSACTION's.
var levels = map[string]string{
	"READ COMMITTED":  "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
	"REPEATABLE READ": "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
	"SERIALIZABLE":    "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
}

// forUpdate is naive/forupdate's check: lock the event's inbox row, which
// does not exist yet.
const forUpdate = `SELECT COUNT(*) FROM inbox WHERE source = 'p' AND event_id = 'e1' FOR UPDATE`

// TestGapLocks: at REPEATABLE READ, SELECT … FOR UPDATE of a key that is
// not there locks the gap where it would go, and two sessions both hold
// that gap lock: the second SELECT does not wait. Each then INSERTs the
// key: the first INSERT waits for the other's gap lock, the second closes
// the cycle and gets 1213 (it is the one rolled back), and the first goes
// through. At READ COMMITTED there are no gap locks: the first INSERT goes
// through at once, the second waits for its row and, once it commits,
// gets 1062, a duplicate. So check-then-act with FOR UPDATE at the default
// level answers no event twice, but turns every race into a deadlock the
// handler must retry.
//
// Docs: gap locks "are “purely inhibitive”, which means they only stop
// other transactions from inserting to the gap. They do not prevent
// different transactions from taking gap locks on the same gap. Thus, a gap
// X-lock has the same effect as a gap S-lock", and READ COMMITTED disables
// them (MySQL's "InnoDB Locking",
// https://dev.mysql.com/doc/refman/8.0/en/innodb-locking.html#innodb-gap-locks;
// MariaDB's InnoDB Lock Modes page, https://mariadb.com/kb/en/innodb-lock-modes/,
// describes shared, exclusive and intention locks, and the kit found no
// MariaDB page on gap locks). The run agrees.
func TestGapLocks(t *testing.T) {
	for _, level := range []string{"REPEATABLE READ", "READ COMMITTED"} {
		t.Run(level, func(t *testing.T) {
			s := need(t)
			a := s.session("A", nil, levels[level])
			b := s.session("B", nil, levels[level])
			a.exec("BEGIN")
			if n := a.int(forUpdate); n != 0 {
				t.Fatalf("A: %s = %d, want 0", forUpdate, n)
			}
			b.exec("BEGIN")
			if _, err := b.start(forUpdate).endsWithoutWaiting(); err != nil {
				t.Fatalf("B: %s = %v", forUpdate, err)
			}
			pa := a.start(insert, "p", "e1", 1, 5)
			if level == "READ COMMITTED" {
				if n, err := pa.endsWithoutWaiting(); n != 1 || err != nil {
					t.Fatalf("A: INSERT e1 at READ COMMITTED = %d rows, %v; want 1 row at once", n, err)
				}
				pb := b.start(insert, "p", "e1", 1, 5)
				pb.waitsFor(a)
				a.exec("COMMIT")
				if _, err := pb.end(); code(err) != erDupEntry {
					t.Fatalf("B: INSERT e1 once A committed = %v, want error %d", err, erDupEntry)
				}
				b.exec("ROLLBACK")
				return
			}
			pa.waitsFor(b)
			_, err := b.try(insert, "p", "e1", 1, 5)
			if code(err) != erLockDeadlock {
				t.Fatalf("B: INSERT e1 while A's INSERT waits for B's gap lock = %v, want error %d", err, erLockDeadlock)
			}
			if n, err := pa.end(); n != 1 || err != nil {
				t.Fatalf("A: INSERT e1 once B is rolled back = %d rows, %v; want 1 row", n, err)
			}
			if b.inTx() {
				t.Errorf("B: @@in_transaction after 1213 = 1, want 0")
			}
			a.exec("COMMIT")
			if n := s.count("p", "e1"); n != 1 {
				t.Errorf("inbox rows for e1 = %d, want 1", n)
			}
		})
	}
}

// TestConsistentRead: at REPEATABLE READ a plain SELECT reads the snapshot
// the transaction's first read took: a row another session commits after
// it stays invisible to every later plain SELECT of the transaction, while
// a locking read (FOR UPDATE) and an INSERT see it — the check says "not
// there", the INSERT says 1062. At READ COMMITTED each plain SELECT takes a
// new snapshot and sees the row. So a check-then-act handler's check at
// the default level can be as old as its transaction's first read.
//
// Docs: "All consistent reads within the same transaction read the
// snapshot established by the first read"
// (https://mariadb.com/kb/en/transactions-repeatable-read/; at READ
// COMMITTED "each consistent read, even within the same transaction, sets
// and reads its own fresh snapshot",
// https://mariadb.com/kb/en/set-transaction/). The run agrees.
func TestConsistentRead(t *testing.T) {
	const check = `SELECT COUNT(*) FROM inbox WHERE source = 'p' AND event_id = 'e1'`
	for _, c := range []struct {
		level string
		later int64 // what the second plain SELECT sees
	}{{"REPEATABLE READ", 0}, {"READ COMMITTED", 1}} {
		t.Run(c.level, func(t *testing.T) {
			s := need(t)
			a := s.session("A", nil, levels[c.level])
			b := s.session("B", nil)
			a.exec("BEGIN")
			if n := a.int(check); n != 0 {
				t.Fatalf("A: %s = %d, want 0", check, n)
			}
			b.exec(insert, "p", "e1", 1, 5) // autocommit: committed now
			if n := a.int(check); n != c.later {
				t.Errorf("A: %s after B committed e1 = %d, want %d", check, n, c.later)
			}
			if n := a.int(check + " FOR UPDATE"); n != 1 {
				t.Errorf("A: the same SELECT … FOR UPDATE = %d, want 1 (a locking read reads the latest)", n)
			}
			if _, err := a.try(insert, "p", "e1", 1, 5); code(err) != erDupEntry {
				t.Errorf("A: INSERT e1 = %v, want error %d", err, erDupEntry)
			}
			if n := a.int(check); n != c.later {
				t.Errorf("A: the plain SELECT again = %d, want %d", n, c.later)
			}
			a.exec("ROLLBACK")
		})
	}
}

// TestSerializable: SERIALIZABLE turns a plain SELECT inside a transaction
// into a locking read (LOCK IN SHARE MODE): a session at SERIALIZABLE that
// has checked for e1 holds a shared lock on the gap, so another session's
// INSERT of e1 waits until it ends; at REPEATABLE READ the same INSERT goes
// through at once. Two sessions at SERIALIZABLE that both check and then
// both INSERT deadlock, as with FOR UPDATE at REPEATABLE READ
// (TestGapLocks): the second INSERT gets 1213. It holds with autocommit on
// as the driver leaves it: BEGIN starts the transaction.
//
// Docs: "Similar to REPEATABLE READ, but InnoDB implicitly converts all
// plain SELECT statements to SELECT ... LOCK IN SHARE MODE if autocommit is
// disabled" (https://mariadb.com/kb/en/transactions-serializable/). The run
// agrees, reading "autocommit is disabled" as "inside a transaction":
// after BEGIN with autocommit=1 the SELECT locks too.
func TestSerializable(t *testing.T) {
	const check = `SELECT COUNT(*) FROM inbox WHERE source = 'p' AND event_id = 'e1'`
	for _, level := range []string{"REPEATABLE READ", "SERIALIZABLE"} {
		t.Run("a plain SELECT at "+level, func(t *testing.T) {
			s := need(t)
			a := s.session("A", nil, levels[level])
			b := s.session("B", nil)
			a.exec("BEGIN")
			if n := a.int(check); n != 0 {
				t.Fatalf("A: %s = %d, want 0", check, n)
			}
			p := b.start(insert, "p", "e1", 1, 5)
			if level == "REPEATABLE READ" {
				if n, err := p.endsWithoutWaiting(); n != 1 || err != nil {
					t.Fatalf("B: INSERT e1 = %d rows, %v; want 1 row at once", n, err)
				}
				a.exec("COMMIT")
				return
			}
			p.waitsFor(a)
			a.exec("COMMIT")
			if n, err := p.end(); n != 1 || err != nil {
				t.Fatalf("B: INSERT e1 once A committed = %d rows, %v; want 1 row", n, err)
			}
		})
	}
	t.Run("both check, then both INSERT, at SERIALIZABLE", func(t *testing.T) {
		s := need(t)
		a := s.session("A", nil, levels["SERIALIZABLE"])
		b := s.session("B", nil, levels["SERIALIZABLE"])
		a.exec("BEGIN")
		a.int(check)
		b.exec("BEGIN")
		if _, err := b.start(check).endsWithoutWaiting(); err != nil {
			t.Fatalf("B: %s = %v", check, err)
		}
		pa := a.start(insert, "p", "e1", 1, 5)
		pa.waitsFor(b)
		if _, err := b.try(insert, "p", "e1", 1, 5); code(err) != erLockDeadlock {
			t.Fatalf("B: INSERT e1 = %v, want error %d", err, erLockDeadlock)
		}
		if n, err := pa.end(); n != 1 || err != nil {
			t.Fatalf("A: INSERT e1 once B is rolled back = %d rows, %v; want 1 row", n, err)
		}
		a.exec("COMMIT")
	})
}

// TestSnapshotIsolation: this server has innodb_snapshot_isolation, OFF by
// default (TestDefaults), settable per session. With it ON, at REPEATABLE
// READ, a transaction that has read (and so holds a snapshot) and then
// writes or lock-reads a row that another transaction committed after the
// snapshot gets 1020, "Record has changed since last read in table …; try
// restarting transaction" (SQLSTATE HY000), and its whole transaction is
// rolled back (@@in_transaction is 0 after it), like a deadlock. This
// applies to the credit's UPDATE of an account another delivery credited,
// and to the inbox: the INSERT of a key another delivery committed since
// is 1020 instead of 1062, and so are INSERT IGNORE and ON DUPLICATE KEY
// UPDATE, which would otherwise answer "0 rows" — and so is SELECT … FOR
// UPDATE. With it OFF the same statements read the latest committed row (a
// lost update for a handler that computed from its snapshot). At READ
// COMMITTED, and for a transaction that has read nothing before it writes
// (correct's handler starts with its INSERT), ON changes nothing. So it is
// an axis only for handlers that read before they write: for them it turns
// a stale check into a retryable error.
//
// Docs: 1020 is ER_CHECKREAD, "Record has changed since last read in table
// '%s'" (https://mariadb.com/kb/en/e1020, whose "Possible Causes" section
// is empty); that it must roll back the whole transaction is a fix
// of MariaDB's, "innodb_snapshot_isolation=ON fails to signal
// transaction rollback" (https://github.com/MariaDB/server/commit/1cad1dbde6).
// The kit found no MariaDB page describing the variable itself; the run is
// the reference.
func TestSnapshotIsolation(t *testing.T) {
	probe := need(t)
	if _, ok := probe.variable("innodb_snapshot_isolation"); !ok {
		t.Skip("this server has no innodb_snapshot_isolation")
	}
	const (
		upsert  = `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ('p', 'e1', 1, 5) ON DUPLICATE KEY UPDATE source = source`
		ignored = `INSERT IGNORE INTO inbox (source, event_id, account_id, amount) VALUES ('p', 'e1', 1, 5)`
	)
	statements := []struct{ name, q, off string }{
		{"the credit", "UPDATE accounts SET balance = balance + 7 WHERE id = 1", "1 row"},
		{"INSERT", "INSERT INTO inbox (source, event_id, account_id, amount) VALUES ('p', 'e1', 1, 5)", "error 1062"},
		{"INSERT IGNORE", ignored, "0 rows"},
		{"ON DUPLICATE KEY UPDATE", upsert, "0 rows"},
		{"SELECT … FOR UPDATE", "SELECT COUNT(*) FROM inbox WHERE source = 'p' AND event_id = 'e1' FOR UPDATE", "ok"},
	}
	for _, st := range statements {
		for _, c := range []struct {
			setting, level string
			read           bool // the transaction reads before B commits
			want           string
		}{
			{"OFF", "REPEATABLE READ", true, st.off},
			{"ON", "REPEATABLE READ", true, "error 1020"},
			{"ON", "READ COMMITTED", true, st.off},
			{"ON", "REPEATABLE READ", false, st.off},
		} {
			name := fmt.Sprintf("%s, innodb_snapshot_isolation=%s at %s", st.name, c.setting, c.level)
			if !c.read {
				name += ", nothing read before"
			}
			t.Run(name, func(t *testing.T) {
				s := need(t)
				a := s.session("A", nil, "SET SESSION innodb_snapshot_isolation = "+c.setting, levels[c.level])
				b := s.session("B", nil)
				a.exec("BEGIN")
				if c.read {
					a.int("SELECT COUNT(*) FROM inbox") // the snapshot
					a.int("SELECT balance FROM accounts WHERE id = 1")
				}
				b.exec(insert, "p", "e1", 1, 5) // committed after A's snapshot
				b.exec(credit, 5, 1)
				res, err := a.try(st.q)
				got := "ok"
				switch {
				case err != nil:
					got = fmt.Sprintf("error %d", code(err))
				case strings.HasPrefix(st.q, "SELECT"):
				default:
					n, _ := res.RowsAffected()
					got = fmt.Sprintf("%d rows", n)
					if n == 1 {
						got = "1 row"
					}
				}
				if got != c.want {
					t.Fatalf("A: %s = %s (%v), want %s", st.q, got, err, c.want)
				}
				if code(err) == erCheckRead {
					t.Logf("A: %v", err)
				}
				if wantTx := code(err) != erCheckRead; a.inTx() != wantTx {
					t.Errorf("A: @@in_transaction after %s = %v, want %v", got, a.inTx(), wantTx)
				}
				a.exec("ROLLBACK")
			})
		}
	}
}

// TestOnDuplicateKeyUpdateCounts: INSERT … ON DUPLICATE KEY UPDATE reports
// 1 row affected for a row it inserted, 2 for a row it updated to new
// values, and 0 for a row it left as it was (an assignment that changes
// nothing, such as source = source). With the driver's DSN flag
// clientFoundRows=true (the CLIENT_FOUND_ROWS capability) the 0 becomes 1:
// a duplicate then counts exactly as a new row does, and a handler that
// reads 1 as "inserted" credits the duplicate again.
//
// Docs: "The row/s affected value is reported as 1 if a row is inserted,
// and 2 if a row is updated, unless the API's CLIENT_FOUND_ROWS flag is
// set" (https://mariadb.com/kb/en/insert-on-duplicate-key-update/);
// MySQL's C API page gives the 0 for "an existing row is set to its
// current values" and "If you specify the CLIENT_FOUND_ROWS flag, the
// affected-rows value is 1 (not 0)"
// (https://dev.mysql.com/doc/c-api/8.0/en/mysql-affected-rows.html). The
// driver documents clientFoundRows=true as making "an UPDATE … return the
// number of matching rows instead of the number of rows changed"
// (github.com/go-sql-driver/mysql's README). The run agrees; MariaDB's page
// leaves out the 0.
func TestOnDuplicateKeyUpdateCounts(t *testing.T) {
	s := need(t)
	const upsert = `INSERT INTO inbox (source, event_id, account_id, amount) VALUES (?, ?, 1, ?)
		ON DUPLICATE KEY UPDATE amount = VALUES(amount)`
	const noop = `INSERT INTO inbox (source, event_id, account_id, amount) VALUES (?, ?, 1, ?)
		ON DUPLICATE KEY UPDATE source = source`
	for _, c := range []struct {
		flag string
		want []int64 // new, changed, unchanged, no-op
	}{
		{"", []int64{1, 2, 0, 0}},
		{"clientFoundRows=true", []int64{1, 2, 1, 1}},
	} {
		db := s.pool(func(cfg *mysql.Config) { cfg.ClientFoundRows = c.flag != "" })
		a := s.session("A", db)
		key := "k" + c.flag
		var got []int64
		for _, st := range []struct {
			q      string
			amount int
		}{{upsert, 5}, {upsert, 6}, {upsert, 6}, {noop, 9}} {
			n, err := a.exec(st.q, "p", key, st.amount).RowsAffected()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		name := "the default DSN"
		if c.flag != "" {
			name = c.flag
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ON DUPLICATE KEY UPDATE rows affected (new, changed, unchanged, no-op) with %s = %v, want %v", name, got, c.want)
		}
	}
}

// TestCorrectCandidates: the two statements a correct handler could start
// with in MariaDB's dialect, side by side, for a new event, a duplicate, a
// duplicate key carrying another account, and the refusals.
//
//   - INSERT … ON DUPLICATE KEY UPDATE source = source: 1 row for a new
//     event, 0 rows for a duplicate (whatever its payload: the no-op
//     assignment checks nothing, and the handler compares the stored row),
//     and an error for every refusal: 1452 for an unknown account, 1048 for
//     a NULL, 4025 for a CHECK, 1406 for an event_id too long. 0 rows means
//     a duplicate, exactly — with the driver's default DSN. With
//     clientFoundRows=true the duplicate's 0 is 1, the same as a new event.
//   - INSERT IGNORE followed by SHOW WARNINGS: 1 row for a new event, 0
//     rows and Warning 1062 for a duplicate, 0 rows and Warning 1452 for an
//     unknown account (Warnings 1048 and 1452 for a NULL one), but error
//     4025 for a CHECK, and for an event_id too long 1 row and Warning 1265:
//     the event is recorded under another key. The warnings tell a
//     duplicate from a refused row only when the handler reads them after
//     every statement, 1 row included, and a truncated key still gets past
//     a handler that reads them only after 0 rows. clientFoundRows changes
//     none of this.
//
// So the correct handler's statement is ON DUPLICATE KEY UPDATE with a
// no-op assignment, on a DSN without clientFoundRows.
//
// Through the driver's server-side prepared statements (its default, without
// interpolateParams) SHOW WARNINGS still lists the INSERT IGNORE's
// warnings.
//
// Docs: see TestInsertIgnore and TestOnDuplicateKeyUpdateCounts; SHOW
// WARNINGS "shows the error, warning, and note messages that resulted from
// the last statement that generated messages in the current session"
// (https://mariadb.com/kb/en/show-warnings/). The run agrees.
func TestCorrectCandidates(t *testing.T) {
	s := need(t)
	s.ctl.Exec(insert, "p", "e1", 1, 5)
	const (
		upsert = `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ('p', ?, ?, ?) ON DUPLICATE KEY UPDATE source = source`
		ignore = `INSERT IGNORE INTO inbox (source, event_id, account_id, amount) VALUES ('p', ?, ?, ?)`
	)
	long := strings.Repeat("y", 200)
	type want struct{ upsert, ignore string }
	cases := []struct {
		name    string
		key     string
		account any
		amount  any
		plain   want // default DSN
		found   want // clientFoundRows=true
	}{
		{"new", "new", 1, 5,
			want{"1 row", "1 row"}, want{"1 row", "1 row"}},
		{"duplicate", "e1", 1, 5,
			want{"0 rows", "0 rows; Warning 1062"}, want{"1 row", "0 rows; Warning 1062"}},
		{"duplicate key, unknown account", "e1", 99, 5,
			want{"0 rows", "0 rows; Warning 1062"}, want{"1 row", "0 rows; Warning 1062"}},
		{"unknown account", "fk", 99, 5,
			want{"error 1452; Error 1452", "0 rows; Warning 1452"}, want{"error 1452; Error 1452", "0 rows; Warning 1452"}},
		{"NULL account", "null", nil, 5,
			want{"error 1048; Error 1048, Error 1105", "0 rows; Warning 1048, Warning 1452"},
			want{"error 1048; Error 1048, Error 1105", "0 rows; Warning 1048, Warning 1452"}},
		{"amount 0 (CHECK)", "zero", 1, 0,
			want{"error 4025; Error 4025", "error 4025; Error 4025"}, want{"error 4025; Error 4025", "error 4025; Error 4025"}},
		{"event_id of 200 characters", long, 1, 5,
			want{"error 1406; Error 1406", "1 row; Warning 1265"}, want{"error 1406; Error 1406", "1 row; Warning 1265"}},
	}
	for _, dsn := range []string{"the default DSN", "clientFoundRows=true"} {
		db := s.pool(func(cfg *mysql.Config) { cfg.ClientFoundRows = dsn != "the default DSN" })
		a := s.session("A", db)
		for _, c := range cases {
			w := c.plain
			if dsn != "the default DSN" {
				w = c.found
			}
			for _, st := range []struct{ name, q, want string }{
				{"ON DUPLICATE KEY UPDATE source = source", upsert, w.upsert},
				{"INSERT IGNORE", ignore, w.ignore},
			} {
				// Each statement in a transaction it rolls back, so that
				// every case meets the inbox as it was: only e1 in it.
				a.exec("BEGIN")
				got := a.outcome(st.q, c.key, c.account, c.amount)
				a.exec("ROLLBACK")
				if got != st.want {
					t.Errorf("%s, %s, with %s = %s, want %s", st.name, c.name, dsn, got, st.want)
				}
			}
		}
	}
	prepared := s.pool(func(cfg *mysql.Config) { cfg.InterpolateParams = false })
	b := s.session("B", prepared)
	if got, want := b.outcome(ignore, "e1", 1, 5), "0 rows; Warning 1062"; got != want {
		t.Errorf("INSERT IGNORE of a duplicate as a server-side prepared statement = %s, want %s", got, want)
	}
}

// TestKeyCollation: the inbox key compares under its columns' collation.
// Under utf8mb4_general_ci (the collation of the database the facts run
// in, from the server's character_set_server; Debian's configuration sets
// the same) and under any PAD SPACE collation, keys that differ only in
// trailing spaces are duplicates; under a case-insensitive one, keys that
// differ only in case are too: 'evt_A' and 'evt_a ' are answered as
// duplicates of 'evt_a'. utf8mb4_bin tells case apart but still pads;
// utf8mb4_nopad_bin and VARBINARY tell every byte apart. An event id is an
// opaque string, so its column wants a NO PAD binary collation (the
// facts' schema uses utf8mb4_nopad_bin); otherwise two events are one.
//
// Docs: "NO PAD collations regard trailing spaces as normal characters"
// (https://mariadb.com/kb/en/information-schema-collations-table/); "If a
// unique index consists of a column where trailing pad characters are
// stripped or ignored, inserts into that column where values differ only
// by the number of trailing pad characters will result in a duplicate-key
// error" (https://mariadb.com/kb/en/char/). The run agrees.
func TestKeyCollation(t *testing.T) {
	s := need(t)
	var def string
	if err := s.ctl.QueryRow("SELECT @@collation_database").Scan(&def); err != nil {
		t.Fatal(err)
	}
	t.Logf("the database's default collation: %s", def)
	for i, c := range []struct {
		column string
		want   []string // 'evt_a', then 'evt_A', then 'evt_a '
	}{
		{"VARCHAR(32) COLLATE utf8mb4_general_ci", []string{"1 row", "error 1062", "error 1062"}},
		{"VARCHAR(32) COLLATE utf8mb4_bin", []string{"1 row", "1 row", "error 1062"}},
		{"VARCHAR(32) COLLATE utf8mb4_nopad_bin", []string{"1 row", "1 row", "1 row"}},
		{"VARBINARY(128)", []string{"1 row", "1 row", "1 row"}},
	} {
		table := fmt.Sprintf("k%d", i)
		s.ctl.Exec(fmt.Sprintf("CREATE TABLE %s (id %s PRIMARY KEY) ENGINE=InnoDB CHARACTER SET utf8mb4", table, c.column))
		var got []string
		for _, k := range []string{"evt_a", "evt_A", "evt_a "} {
			_, err := s.ctl.Exec("INSERT INTO "+table+" (id) VALUES (?)", k)
			switch {
			case err == nil:
				got = append(got, "1 row")
			case code(err) != 0:
				got = append(got, fmt.Sprintf("error %d", code(err)))
			default:
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("INSERT 'evt_a', 'evt_A', 'evt_a ' into a key %s = %v, want %v", c.column, got, c.want)
		}
	}
}

// TestWaitDetection: the server's own view of who waits for whom, which a
// scheduler can ask from a connection of its own, as the PostgreSQL backend
// asks pg_blocking_pids. On 10.11 it is there three ways:
// information_schema.INNODB_TRX (trx_state 'LOCK WAIT', with the
// connection id in trx_mysql_thread_id), INNODB_LOCK_WAITS (requesting and
// blocking transaction ids; INNODB_LOCKS gives the locks), and the sys
// schema's innodb_lock_waits view over them (waiting_pid, blocking_pid).
// The join names the holder exactly: a session waiting for A's row is
// blocked by A, not by an idle third session; one that runs is blocked by
// no one.
//
// Docs: INNODB_TRX's TRX_STATE is "one of RUNNING, LOCK WAIT, ROLLING BACK
// or COMMITTING" and TRX_MYSQL_THREAD_ID the "Thread ID from the
// PROCESSLIST table"
// (https://mariadb.com/kb/en/information-schema-innodb_trx-table/);
// INNODB_LOCK_WAITS has requesting_trx_id and blocking_trx_id
// (https://mariadb.com/docs/server/ref/mdb/information-schema/INNODB_LOCK_WAITS);
// the sys views are in MariaDB from 10.6
// (https://mariadb.com/kb/en/innodb_lock_waits-and-xinnodb_lock_waits-sys-schema-views/).
// The run agrees. The three tables are one cache: TestInnoDBTrxIsACache.
func TestWaitDetection(t *testing.T) {
	s := need(t)
	for _, v := range []struct{ schema, name string }{
		{"information_schema", "INNODB_TRX"},
		{"information_schema", "INNODB_LOCKS"},
		{"information_schema", "INNODB_LOCK_WAITS"},
		{"sys", "innodb_lock_waits"},
	} {
		var n int
		if err := s.ctl.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", v.schema, v.name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s.%s: not on this server, want it there", v.schema, v.name)
		}
	}
	a := s.session("A", nil)
	b := s.session("B", nil)
	c := s.session("C", nil)
	a.exec("BEGIN")
	a.exec(insert, "p", "e1", 1, 5)
	c.exec("BEGIN")
	c.int("SELECT balance FROM accounts WHERE id = 2 FOR UPDATE") // C holds a lock of its own, on another row
	b.exec("BEGIN")
	p := b.start(insert, "p", "e1", 1, 5)
	p.waitsFor(a)
	if got := s.blockers(b.id); !slices.Equal(got, []int64{a.id}) {
		t.Errorf("blockers(B) = %v, want [%d] (A)", got, a.id)
	}
	if got := s.blockers(c.id); len(got) != 0 {
		t.Errorf("blockers(C) = %v, want none", got)
	}
	var waiting, blocking int64
	var mode string
	// The view shows every wait on the server: B's row, not another
	// client's (a MariaDB suite running beside).
	if err := s.ctl.QueryRow("SELECT waiting_pid, blocking_pid, waiting_lock_mode FROM sys.innodb_lock_waits WHERE waiting_pid = ?", b.id).Scan(&waiting, &blocking, &mode); err != nil {
		t.Fatalf("sys.innodb_lock_waits: %v", err)
	}
	t.Logf("sys.innodb_lock_waits: waiting_pid %d (B), blocking_pid %d (A), waiting_lock_mode %s", waiting, blocking, mode)
	if waiting != b.id || blocking != a.id {
		t.Errorf("sys.innodb_lock_waits = waiting %d, blocking %d; want %d (B) waiting for %d (A)", waiting, blocking, b.id, a.id)
	}
	a.exec("ROLLBACK")
	if n, err := p.end(); n != 1 || err != nil {
		t.Fatalf("B: INSERT e1 once A rolled back = %d rows, %v; want 1 row", n, err)
	}
	b.exec("COMMIT")
	c.exec("COMMIT")
}

// liveWaits reports whether connection id waits for a lock, from SHOW
// ENGINE INNODB STATUS, which InnoDB writes from its lock tables when asked
// (no cache): the block of the transaction whose "MariaDB thread id" is
// id says "LOCK WAIT".
func (s *server) liveWaits(id int64) bool {
	s.t.Helper()
	var typ, name, status string
	if err := s.ctl.QueryRow("SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		s.t.Fatalf("SHOW ENGINE INNODB STATUS: %v", err)
	}
	for _, block := range strings.Split(status, "---TRANSACTION ") {
		if strings.Contains(block, fmt.Sprintf("MariaDB thread id %d,", id)) {
			return strings.Contains(block, "LOCK WAIT")
		}
	}
	return false
}

// TestInnoDBTrxIsACache: INNODB_TRX, INNODB_LOCKS and INNODB_LOCK_WAITS
// are read from one copy of InnoDB's state, taken when someone reads them
// after nobody has for 0.1 s. Read more often than that — by any client of
// the server — the copy is never taken again: a session that started
// waiting after the copy stays "not waiting" in it for as long as the
// reads go on, while SHOW ENGINE INNODB STATUS, which reads InnoDB's lock
// tables themselves, shows it waiting. After 0.1 s without reads, the next
// read shows the wait. So a wait detector on these tables must poll no
// faster than every 0.1 s (the facts poll every 0.12 s), sees a state up to
// one poll old, and can be starved by another client polling them; one on
// SHOW ENGINE INNODB STATUS is live, but parses text.
//
// The run stops reading for 0.25 s once: that idle time is what is being
// measured, not a wait for the server to reach a state.
//
// Docs: MariaDB's source (storage/innobase/trx/trx0i_s.cc) keeps "the
// minimum time that a cache must not be updated after it has been read for
// the last time", CACHE_MIN_IDLE_TIME_NS, 0.1 s, "to ensure that SELECTs
// which join several INFORMATION SCHEMA tables read the same version of
// the cache"; INNODB_TRX's page says only that the locking tables "use a
// different snapshot from the processlist"
// (https://mariadb.com/kb/en/information-schema-innodb_trx-table/). The run
// agrees with the source.
func TestInnoDBTrxIsACache(t *testing.T) {
	s := need(t)
	a := s.session("A", nil)
	b := s.session("B", nil)
	a.exec("BEGIN")
	a.exec(credit, 1, 1)
	state := func() (string, time.Time) {
		var st sql.NullString
		err := s.ctl.QueryRow("SELECT MAX(trx_state) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ?", b.id).Scan(&st)
		if err != nil {
			t.Fatal(err)
		}
		return st.String, time.Now()
	}
	// The copy, taken before B waits (the first read after a quiet 0.1 s;
	// if another client read within it, an older copy: either way B is not
	// waiting in it).
	_, last := state()
	b.exec("BEGIN")
	p := b.start(credit, 5, 1)
	var gap time.Duration
	seen := 0
	deadline := time.Now().Add(stuck)
	for !s.liveWaits(b.id) {
		st, now := state()
		gap, last = max(gap, now.Sub(last)), now
		if st == "LOCK WAIT" {
			seen++
		}
		if time.Now().After(deadline) {
			t.Fatalf("B: %s not seen waiting in SHOW ENGINE INNODB STATUS within %v", credit, stuck)
		}
	}
	// B waits now. Read the copy again, quickly.
	stale := 0
	for range 20 {
		st, now := state()
		gap, last = max(gap, now.Sub(last)), now
		if st != "LOCK WAIT" {
			stale++
		}
	}
	t.Logf("reads at most %v apart: %d of 20 showed B not waiting while it waited (%d showed it waiting before the live view did)", gap, stale, seen)
	if gap < 50*time.Millisecond && stale != 20 {
		t.Errorf("INNODB_TRX read at most %v apart after B began to wait: %d of 20 reads showed B not waiting, want 20 (the copy is not retaken while reads go on)", gap, stale)
	}
	if gap >= 50*time.Millisecond {
		t.Logf("this machine let %v pass between two reads, over half the cache's 0.1 s: the stale copy is not asserted", gap)
	}
	<-time.After(250 * time.Millisecond) // the cache's idle time, measured
	if st, _ := state(); st != "LOCK WAIT" {
		t.Errorf("INNODB_TRX after 0.25 s without reads: B's trx_state = %q, want LOCK WAIT", st)
	}
	if got := s.blockers(b.id); !slices.Equal(got, []int64{a.id}) {
		t.Errorf("blockers(B) = %v, want [%d] (A)", got, a.id)
	}
	a.exec("ROLLBACK")
	if _, err := p.end(); err != nil {
		t.Fatal(err)
	}
	b.exec("COMMIT")
}

// envGalera names the environment variable that points the Galera fact at
// a cluster: the DSNs of two or more of its nodes, separated by spaces, as
// .ci/galera-start prints them.
const envGalera = "IDEMLAB_GALERA"

// TestGaleraCertification: on a Galera cluster every node takes writes, and
// row locks are local to a node. Two deliveries of the same event on two
// nodes both INSERT its inbox row without waiting — each statement
// succeeds, 1 row — and the first to COMMIT wins. The other's transaction
// is aborted when the winner's write set reaches its node: the next
// statement it runs, its COMMIT or the credit before it, fails with 1213
// (ER_LOCK_DEADLOCK, "Deadlock found when trying to get lock; try
// restarting transaction"), and nothing of it is kept. After a 1213 on a
// statement before COMMIT the session is outside any transaction, as after
// an InnoDB deadlock (TestDeadlock): a handler that swallowed it would
// COMMIT nothing, successfully. So on Galera the COMMIT, or any statement,
// is where a handler learns that a delivery on another node got there
// first; the answer is to run the delivery again (the INSERT then finds
// the row: duplicate), never "applied" and never "duplicate" from the
// failed statement. (A credit run between B's COMMIT and A's failed with
// 1213 in each of 5 runs here; the test runs A's COMMIT next, which fails
// whichever way the race between A's statement and B's write set goes.)
//
// Docs: MariaDB's own Galera test galera_certification_double_failure
// expects "COMMIT; ERROR 40001: Deadlock found when trying to get lock; try
// restarting transaction" for the loser of two conflicting transactions on
// two nodes (https://github.com/MariaDB/server/commit/ffd583bb8b); the
// Known Limitations page lists the optimistic, commit-time conflict
// detection's anomalies
// (https://mariadb.com/kb/en/mariadb-galera-cluster-known-limitations/).
// The run agrees.
func TestGaleraCertification(t *testing.T) {
	dsns := strings.Fields(os.Getenv(envGalera))
	if len(dsns) < 2 {
		t.Skip(envGalera + ` is not set: to run the Galera fact, eval "$(.ci/galera-start)"`)
	}
	n1 := setUp(t, envGalera, dsns[0])
	n2 := at(t, dsns[1], n1.name)
	a := n1.session("A on node 1", nil)
	// wsrep_sync_wait = 1, as in TestGaleraForeignKeyLocksTheAccount: B's
	// BEGIN first applies what the cluster has committed, the account node
	// 1 wrote among it (bit 1, READ, "includes SELECT, SHOW and
	// BEGIN/START TRANSACTION":
	// https://mariadb.com/docs/server/ref/mdb/system-variables/wsrep_sync_wait).
	// Without it, B's INSERT once met node 2 before the account had
	// reached it, and failed its foreign key (1452), on a machine busy
	// with the MariaDB suite's other parts.
	b := n2.session("B on node 2", nil, "SET SESSION wsrep_sync_wait = 1")
	a.exec("BEGIN")
	if n, _ := a.exec(insert, "p", "e1", 1, 5).RowsAffected(); n != 1 {
		t.Fatalf("A: INSERT e1 = %d rows, want 1", n)
	}
	a.exec(credit, 5, 1)
	b.exec("BEGIN")
	if n, err := b.start(insert, "p", "e1", 1, 5).endsWithoutWaiting(); n != 1 || err != nil {
		t.Fatalf("B: INSERT e1 on node 2 while A holds it on node 1 = %d rows, %v; want 1 row at once", n, err)
	}
	b.exec(credit, 5, 1)
	if _, err := b.try("COMMIT"); err != nil {
		t.Fatalf("B: COMMIT = %v, want success (the first to commit wins)", err)
	}
	// A's COMMIT next: a statement before it could find A's transaction
	// aborted already (when B's write set has been applied on node 1) or
	// not yet; the COMMIT fails either way.
	_, err := a.try("COMMIT")
	if code(err) != erLockDeadlock {
		t.Fatalf("A: COMMIT after B committed the same key on another node = %v, want error %d", err, erLockDeadlock)
	}
	t.Logf("A: COMMIT = %v", err)
	r := n1.synced()
	if got, n := r.balance(1), r.count("p", "e1"); got != 5 || n != 1 {
		t.Errorf("after both: balance = %d, inbox rows for e1 = %d; want 5 and 1 (B's delivery alone)", got, n)
	}
}

// TestGaleraForeignKeyLocksTheAccount: TestForeignKeyLocksTheAccount's
// schedule on the Galera cluster. On one node it is what it is on a
// server alone: each INSERT share-locks account 1, A's credit waits for
// B's lock (seen), B's closes the cycle, and one of them gets 1213. On two
// nodes nothing waits (row locks are local to a node): both deliveries
// INSERT and credit, B commits first, and A's COMMIT fails with 1213
// because both write sets updated account 1, although the events differ.
// So on Galera a delivery meets 1213 for another event's credit on
// another node too, and must run again: then it applies.
//
// Docs: as for TestGaleraCertification, MariaDB's own test
// galera_certification_double_failure expects the loser's COMMIT to fail
// with "ERROR 40001: Deadlock found when trying to get lock"
// (https://github.com/MariaDB/server/commit/ffd583bb8b); neither it nor the
// Known Limitations page
// (https://mariadb.com/kb/en/mariadb-galera-cluster-known-limitations/)
// says that two different child rows conflict through the row they both
// credit; the run shows it. TestForeignKeyLocksTheAccount's note that
// Galera builds take an exclusive lock on the parent row (MariaDB commit
// cc3bee92b6) does not show in a local INSERT: B's INSERT of another
// event for account 1 does not wait for A's, on one node.
func TestGaleraForeignKeyLocksTheAccount(t *testing.T) {
	dsns := strings.Fields(os.Getenv(envGalera))
	if len(dsns) < 2 {
		t.Skip(envGalera + ` is not set: to run the Galera facts, eval "$(.ci/galera-start)"`)
	}
	t.Run("one node", func(t *testing.T) {
		n1 := setUp(t, envGalera, dsns[0])
		a, b := n1.session("A", nil), n1.session("B", nil)
		a.exec("BEGIN")
		a.exec(insert, "p", "ea", 1, 5)
		b.exec("BEGIN")
		if _, err := b.start(insert, "p", "eb", 1, 7).endsWithoutWaiting(); err != nil {
			t.Fatalf("B: INSERT eb on the node where A inserted ea = %v, want 1 row at once", err)
		}
		a.exec("ROLLBACK")
		b.exec("ROLLBACK")
		foreignKeyDeadlock(t, n1, n1.session("A", nil), n1.session("B", nil))
	})
	t.Run("two nodes", func(t *testing.T) {
		n1 := setUp(t, envGalera, dsns[0])
		n2 := at(t, dsns[1], n1.name)
		// wsrep_sync_wait = 1: a BEGIN or SELECT on a node first applies
		// what the cluster has committed (the accounts node 1 wrote),
		// which a node does not otherwise wait for.
		a := n1.session("A on node 1", nil)
		b := n2.session("B on node 2", nil, "SET SESSION wsrep_sync_wait = 1")
		a.exec("BEGIN")
		a.exec(insert, "p", "ea", 1, 5)
		b.exec("BEGIN")
		for _, q := range []struct {
			ss   *session
			q    string
			args []any
		}{{b, insert, []any{"p", "eb", 1, 7}}, {a, credit, []any{5, 1}}, {b, credit, []any{7, 1}}} {
			if _, err := q.ss.start(q.q, q.args...).endsWithoutWaiting(); err != nil {
				t.Fatalf("%s: %s = %v, want it run at once", q.ss.name, q.q, err)
			}
		}
		if _, err := b.try("COMMIT"); err != nil {
			t.Fatalf("B: COMMIT = %v, want success (the first to commit wins)", err)
		}
		_, err := a.try("COMMIT")
		if code(err) != erLockDeadlock {
			t.Fatalf("A: COMMIT after B committed another event's credit of the same account = %v, want error %d", err, erLockDeadlock)
		}
		t.Logf("A: COMMIT = %v", err)
		r := n1.synced()
		if got, na, nb := r.balance(1), r.count("p", "ea"), r.count("p", "eb"); got != 7 || na != 0 || nb != 1 {
			t.Errorf("after both: balance = %d, inbox rows ea %d, eb %d; want 7, 0, 1 (B's delivery alone)", got, na, nb)
		}
		// A runs again, from BEGIN: it applies.
		a.exec("BEGIN")
		a.exec(insert, "p", "ea", 1, 5)
		a.exec(credit, 5, 1)
		a.exec("COMMIT")
		if got := n2.session("C on node 2", nil, "SET SESSION wsrep_sync_wait = 1").int("SELECT balance FROM accounts WHERE id = 1"); got != 12 {
			t.Errorf("after A's retry: balance on node 2 = %d, want 12", got)
		}
	})
}
