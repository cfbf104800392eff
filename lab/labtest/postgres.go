package labtest

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"idemlab/lab"
	"idemlab/lab/report"
)

// This file is the engine's PostgreSQL backend (see server.go for what it
// shares with MariaDB's). Each DB is a schema of its own, lab_<n>, in a
// database the lab creates for the test process, idemlab_<pid>_<n>,
// dropped with it. A session waiting for a lock is seen the way
// PostgreSQL's isolationtester sees it, by asking the server from the
// control connection:
//
//	SELECT EXISTS (SELECT 1 FROM unnest(pg_blocking_pids($1)) p WHERE p = ANY($2))
//
// The timeouts the variant's DSN sets are lock_timeout and
// statement_timeout; OpenScheduled sets both to 0, which PostgreSQL reads
// as no limit.

// postgresEngine is the engine of a PostgreSQL server.
type postgresEngine struct{}

// connectPostgres connects to the server that IDEMLAB_PG names and creates
// a database for this process. It returns nil and the reason when the
// variable is not set.
func connectPostgres() (*Server, string, error) {
	dsn := os.Getenv(report.EnvPostgres)
	if dsn == "" {
		return nil, report.EnvPostgres + " is not set: set it to a PostgreSQL connection string (e.g. postgres:///postgres?host=/var/run/postgresql) to run the PostgreSQL suite", nil
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, "", err
	}
	name := fmt.Sprintf("idemlab_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		return nil, "", fmt.Errorf("CREATE DATABASE %s on %s=%s: %w", name, report.EnvPostgres, dsn, err)
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
	return &Server{admin: admin, control: control, url: u, name: name, engine: postgresEngine{}}, "", nil
}

// NeedPostgres is connectPostgres for a test: it skips the test with the
// one line that says how to run it when IDEMLAB_PG is not set, fails it
// when the server cannot be reached, and drops the test's database when
// the test ends.
func NeedPostgres(tb testing.TB) *Server {
	tb.Helper()
	return need(tb, connectPostgres)
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
	if strings.HasPrefix(cfg.Host, "/") { // a socket directory
		q.Set("host", cfg.Host)
		q.Set("port", fmt.Sprint(cfg.Port))
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

// close drops the lab's database.
func (postgresEngine) close(s *Server) error {
	s.control.Close()
	_, err := s.admin.Exec("DROP DATABASE IF EXISTS " + s.name + " WITH (FORCE)")
	return errors.Join(err, s.admin.Close())
}

func (postgresEngine) versionQuery() string { return "SHOW server_version" }

func (postgresEngine) setting(level Level) string {
	return "PostgreSQL, default_transaction_isolation = " + string(level.Isolation)
}

func (postgresEngine) form(v lab.Variant) (form, bool) {
	if v.Postgres == nil {
		return form{}, false
	}
	return form{schema: []string{v.Postgres.Schema}, dsn: v.Postgres.DSN, new: v.Postgres.New}, true
}

func (postgresEngine) namespace(srv *Server, n int64) (string, string) {
	ns := fmt.Sprintf("lab_%d", n)
	return ns, srv.name + "." + ns
}

// dsn is the variant's DSN on the lab's database with search_path set to
// ns and, when untimed, without its timeouts (withoutTimeouts).
func (postgresEngine) dsn(srv *Server, ns string, f form, level Level, untimed bool) (string, error) {
	if level.SnapshotIsolation {
		return "", errors.New("innodb_snapshot_isolation is MariaDB's: PostgreSQL has no such setting")
	}
	u, err := url.Parse(srv.url)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", ns)
	u.RawQuery = q.Encode()
	dsn := f.dsn(u.String(), level.Isolation)
	if untimed {
		dsn = withoutTimeouts(dsn)
	}
	return dsn, nil
}

func (postgresEngine) connector(dsn string) (driver.Connector, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return stdlib.GetConnector(*cfg), nil
}

func (postgresEngine) integer() string { return "BIGINT" }

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

// create makes schema ns the connection's search_path while the tables
// are made in it.
func (postgresEngine) create(ns string) (enter, leave []string) {
	return []string{"CREATE SCHEMA " + ns, "SET search_path = " + ns}, []string{"RESET search_path"}
}

func (postgresEngine) empty(ns string) []string {
	return []string{`DELETE FROM ` + ns + `.inbox`, `DELETE FROM ` + ns + `.accounts`}
}

func (postgresEngine) drop(ns string) string { return "DROP SCHEMA " + ns + " CASCADE" }

// pid returns the server process of a pgx connection.
func (postgresEngine) pid(c driver.Conn) uint32 {
	if pc, ok := c.(*stdlib.Conn); ok {
		return pc.Conn().PgConn().PID()
	}
	return 0
}

func (postgresEngine) blocked(ctl *sql.DB, pid int64, among []int64) (bool, error) {
	return waitsFor(ctl, pid, among)
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
// report.TranscriptWidth.
func (postgresEngine) interference(srv *Server, serializable bool) string {
	var locks int
	var oldest string
	err := srv.control.QueryRow(`SELECT (SELECT count(*) FROM pg_locks WHERE mode = 'SIReadLock'),
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
	return "\n" + strings.Join(report.WrapWords(hint, report.TranscriptWidth, 0), "\n")
}

// starved reads SQLSTATE class 53 (insufficient resources: out of shared
// memory, too many connections) from a pgx error, wrapped or not.
func (postgresEngine) starved(err error) (string, string) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Code, "53") {
		return "", ""
	}
	return pe.Code, pe.Message
}

// cancelWaiting cancels, with pg_cancel_backend, the statement of every
// session among that waits for a lock the server process holder holds
// (pg_blocking_pids), and returns how many it cancelled.
func (postgresEngine) cancelWaiting(srv *Server, among []int64, holder int64) (int, error) {
	var n int
	err := srv.control.QueryRow(`SELECT count(*) FILTER (WHERE pg_cancel_backend(p::int))
		FROM unnest($1::bigint[]) p WHERE $2::int = ANY(pg_blocking_pids(p::int))`, among, holder).Scan(&n)
	return n, err
}

func (postgresEngine) sessionQuery() string { return "SELECT pg_backend_pid()" }

func (postgresEngine) cancelName() string { return "pg_cancel_backend" }

// holdTables locks both tables in EXCLUSIVE mode, which conflicts with
// every lock but ACCESS SHARE, a plain SELECT's.
func (postgresEngine) holdTables() []string {
	return []string{"BEGIN", "LOCK TABLE inbox, accounts IN EXCLUSIVE MODE"}
}
