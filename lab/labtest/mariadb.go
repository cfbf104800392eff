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
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"idemlab/lab"
	"idemlab/lab/report"
)

// This file is the engine's MariaDB (InnoDB) backend (see server.go for
// what it shares with PostgreSQL's). It differs from PostgreSQL's in three
// ways:
//
//   - A database per DB. MariaDB has no schemas inside a database (a
//     schema is a database), so each DB the run opens is a database of its
//     own, idemlab_<pid>_<n>_<k>, created on the control connection and
//     dropped when the root run closes; a child run's database is kept and
//     reseeded for the next child, and emptied by TRUNCATE TABLE (empty).
//   - A session is its connection's CONNECTION_ID(), asked of each new
//     connection by the hooking connector (connectionID).
//   - A wait is seen in SHOW ENGINE INNODB STATUS (waitsMariaDB): the block
//     of the transaction whose "MariaDB thread id" is the session's says
//     "LOCK WAIT". information_schema.INNODB_TRX and INNODB_LOCK_WAITS name
//     the holder too, but they are one cache, refilled only when read after
//     0.1 s without reads: polled as often as the scheduler polls (every
//     pollEvery), or by anyone else on the server that often, they would
//     never show a wait that began after the last refill
//     (mariadb.TestInnoDBTrxIsACache). SHOW ENGINE INNODB STATUS reads
//     InnoDB's lock tables when asked. It does not name the holder: within
//     the DB's own database, no connection but the run's holds locks. It
//     lists every transaction on the server, so one reading answers for
//     every session the process asks about (statusReader).
//
// Timeouts are the server's (innodb_lock_wait_timeout, max_statement_time,
// from the variant's DSN), never a cancelled context: the driver answers a
// cancelled context by closing the connection. OpenScheduled opens a
// database with innodb_lock_wait_timeout at its maximum, 100000000 s, and
// max_statement_time 0 (no limit), so that no scheduled wait ends by a
// timer.

// untimedLockWait is innodb_lock_wait_timeout for OpenScheduled: the
// largest the server takes, in seconds (about three years).
const untimedLockWait = "100000000"

// mariadbEngine is the engine of a MariaDB server.
type mariadbEngine struct {
	status *statusReader // the process's reader of SHOW ENGINE INNODB STATUS
}

// connectMariaDB connects to the server that IDEMLAB_MARIADB names. It
// returns nil and the reason when the variable is not set. The databases
// the runs open on it are named after the returned Server's name.
func connectMariaDB() (*Server, string, error) {
	dsn := os.Getenv(report.EnvMariaDB)
	if dsn == "" {
		return nil, report.EnvMariaDB + ` is not set: eval "$(.ci/mariadb-start)" to run the MariaDB suite`, nil
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", report.EnvMariaDB, err)
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
		return nil, "", fmt.Errorf("connecting to %s=%s: %w", report.EnvMariaDB, dsn, err)
	}
	name := fmt.Sprintf("idemlab_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	return &Server{admin: control, control: control, url: cfg.FormatDSN(), name: name, engine: mariadbEngine{status: newStatusReader(control)}}, "", nil
}

// NeedMariaDB is connectMariaDB for a test: it skips the test with the one
// line that says how to run it when IDEMLAB_MARIADB is not set, fails it
// when the server cannot be reached, and drops what the test left on the
// server when it ends.
func NeedMariaDB(tb testing.TB) *Server {
	tb.Helper()
	return need(tb, connectMariaDB)
}

// close drops every database the runs on s left (a failed test leaves its
// own), and closes the control connection.
func (mariadbEngine) close(s *Server) error {
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

func (mariadbEngine) versionQuery() string { return "SELECT VERSION()" }

func (mariadbEngine) setting(level Level) string {
	s := "MariaDB, tx_isolation = " + strings.ToUpper(strings.ReplaceAll(string(level.Isolation), " ", "-"))
	if level.SnapshotIsolation {
		s += ", innodb_snapshot_isolation = ON"
	}
	return s
}

func (mariadbEngine) form(v lab.Variant) (form, bool) {
	if v.MariaDB == nil {
		return form{}, false
	}
	return form{schema: v.MariaDB.Schema, dsn: v.MariaDB.DSN, new: v.MariaDB.New}, true
}

func (mariadbEngine) namespace(srv *Server, n int64) (string, string) {
	ns := fmt.Sprintf("%s_%d", srv.name, n)
	return ns, ns
}

// dsn is the variant's DSN on database ns, when untimed with
// innodb_lock_wait_timeout at its maximum and max_statement_time 0, and
// with innodb_snapshot_isolation=ON at a level that asks for it (MariaDB's
// "System Variables Added in MariaDB 10.11" gives 10.11.8 for it; a server
// without it refuses the connection with 1193, unknown system variable).
func (mariadbEngine) dsn(srv *Server, ns string, f form, level Level, untimed bool) (string, error) {
	cfg, err := mysql.ParseDSN(srv.url)
	if err != nil {
		return "", err
	}
	cfg.DBName = ns
	delete(cfg.Params, "tx_isolation") // the control connection's; the variant sets its own
	dsn := f.dsn(cfg.FormatDSN(), level.Isolation)
	if !untimed && !level.SnapshotIsolation {
		return dsn, nil
	}
	if cfg, err = mysql.ParseDSN(dsn); err != nil {
		return "", fmt.Errorf("%q: %w", dsn, err)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if untimed {
		cfg.Params["innodb_lock_wait_timeout"] = untimedLockWait
		cfg.Params["max_statement_time"] = "0"
	}
	if level.SnapshotIsolation {
		cfg.Params["innodb_snapshot_isolation"] = "ON"
	}
	return cfg.FormatDSN(), nil
}

func (mariadbEngine) connector(dsn string) (driver.Connector, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return mysql.NewConnector(cfg)
}

// integer is SIGNED: MariaDB has no CAST AS BIGINT.
func (mariadbEngine) integer() string { return "SIGNED" }

// create makes database ns the connection's default while the tables are
// made in it.
func (mariadbEngine) create(ns string) (enter, leave []string) {
	return []string{"CREATE DATABASE " + ns + " CHARACTER SET utf8mb4", "USE " + ns}, nil
}

// empty is TRUNCATE TABLE, which makes each table anew, and not DELETE,
// which leaves its rows delete-marked in the indexes until InnoDB's purge
// thread removes them, at its own pace. A delete-marked row is still a
// record that an INSERT's locks meet, so the locks a delivery takes, and
// which of two deadlocked transactions InnoDB rolls back, likely depend on
// how far purge has got: emptied by DELETE, DistinctRace's replays
// diverged from the runs they replayed in 7 of 24 cells (8 runs of three
// levels), with InnoDB rolling back the transaction that did not close the
// cycle; in a new database each time, and emptied by TRUNCATE, in none of
// 24. foreign_key_checks = 0, for the statements' connection only:
// TRUNCATE refuses a table another table's foreign key refers to
// (accounts), even an empty one.
func (mariadbEngine) empty(ns string) []string {
	return []string{`SET foreign_key_checks = 0`, `TRUNCATE TABLE ` + ns + `.inbox`,
		`TRUNCATE TABLE ` + ns + `.accounts`, `SET foreign_key_checks = 1`}
}

func (mariadbEngine) drop(ns string) string { return "DROP DATABASE IF EXISTS " + ns }

func (mariadbEngine) pid(c driver.Conn) uint32 { return connectionID(c) }

// blocked asks SHOW ENGINE INNODB STATUS (waitsMariaDB), which does not
// name the holder: among is not needed, since within the DB's own database
// no connection but the run's holds locks.
func (e mariadbEngine) blocked(_ *sql.DB, pid int64, _ []int64) (bool, error) {
	return waitsMariaDB(e.status, pid)
}

// interference: nothing of MariaDB's shared state is known to change its
// answers on a repeated schedule (the purge finding is the lab's own,
// answered by empty).
func (mariadbEngine) interference(*Server, bool) string { return "" }

// starved: MariaDB's refusals for lack of resources are not classified yet.
func (mariadbEngine) starved(error) (string, string) { return "", "" }

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
// server, through st, whether the connection id waits for a lock. Every
// call is answered by a reading of the server begun after the call was.
func waitsMariaDB(st *statusReader, id int64) (bool, error) {
	status, err := st.read()
	if err != nil {
		return false, err
	}
	return lockWaitIn(status, id), nil
}

// statusReader reads SHOW ENGINE INNODB STATUS on the control connection
// for every wait detector of the process (each scheduler, each
// Delivery.WhileLocked), and shares each reading among the callers that
// were waiting for one when it began. Each reading is the text of every
// transaction on the server, so one answers for every session. Asked
// separately for each session of each cell, the server wrote the same
// text over and over: a run of TestMariaDB at -parallel 8 read it 164,000
// times and took 77 s of the server's CPU; with the readings shared and
// the first look after a pause (scheduler.step), 42,000 times and 53 s. A
// reading answers a caller only if it began after the call did: one
// already under way may have been taken before the wait the caller asks
// about began, and the caller waits for the next.
type statusReader struct {
	fetch func() (string, error) // one reading: SHOW ENGINE INNODB STATUS's text

	mu      sync.Mutex
	changed *sync.Cond // signalled when a reading ends; on mu
	begun   uint64     // readings begun so far
	ended   uint64     // the number of the last reading ended
	reading bool       // a reading is under way
	text    string     // the last reading's text
	err     error      // the last reading's error
}

// newStatusReader returns the statusReader that reads on the control
// connection ctl.
func newStatusReader(ctl *sql.DB) *statusReader {
	return &statusReader{fetch: func() (string, error) {
		var typ, name, text string
		err := ctl.QueryRow("SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &text)
		return text, err
	}}
}

// read returns the text of a reading of SHOW ENGINE INNODB STATUS begun
// after read was called: its own, or one it shares with other callers.
func (st *statusReader) read() (string, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.changed == nil {
		st.changed = sync.NewCond(&st.mu)
	}
	// Every reading numbered above begun begins after this call.
	want := st.begun + 1
	for st.ended < want {
		if st.reading {
			st.changed.Wait()
			continue
		}
		st.reading = true
		st.begun++
		n := st.begun
		st.mu.Unlock()
		text, err := st.fetch()
		st.mu.Lock()
		st.reading = false
		st.ended, st.text, st.err = n, text, err
		st.changed.Broadcast()
	}
	return st.text, st.err
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

// cancelWaiting ends, with KILL QUERY, the statement of every session
// among but holder that SHOW ENGINE INNODB STATUS shows in LOCK WAIT, and
// returns how many it ended: each gets 1317, its transaction still open
// (mariadb.TestKillQuery). Like blocked, it does not ask whose lock a
// session waits for: within the DB's own database only the run's
// connections hold locks, and while Delivery.WhileLocked holds, only holder
// and the one delivery it holds back are busy.
func (e mariadbEngine) cancelWaiting(srv *Server, among []int64, holder int64) (int, error) {
	status, err := e.status.read()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range among {
		if id == holder || !lockWaitIn(status, id) {
			continue
		}
		if _, err := srv.control.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (mariadbEngine) sessionQuery() string { return "SELECT CONNECTION_ID()" }

func (mariadbEngine) cancelName() string { return "KILL QUERY" }

// holdTables is a locking read of every row of both tables at REPEATABLE
// READ (for the next transaction only, whatever the pool's level): it
// locks every record and every gap, the last included, so no other
// transaction, at any level, can insert, update or lock a row; plain reads
// go through, but at SERIALIZABLE a read of a row it locked waits
// (mariadb.TestKillQuery). MariaDB's LOCK TABLES would hold the tables
// above InnoDB, where a waiting session shows in no InnoDB lock view.
func (mariadbEngine) holdTables() []string {
	return []string{
		"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"BEGIN",
		"SELECT source, event_id, account_id, amount FROM inbox FOR UPDATE",
		"SELECT id, balance FROM accounts FOR UPDATE",
	}
}
