package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"testing"
	"testing/synctest"

	"github.com/go-sql-driver/mysql"

	"idemlab/lab"
	"idemlab/postgres"
)

// TestDSN holds DSN to what the driver reads back from it: the level as
// tx_isolation, both timeouts, parseTime and interpolateParams on,
// clientFoundRows off even when the server's DSN had it, and the server's
// own address, user and database kept.
func TestDSN(t *testing.T) {
	for _, level := range lab.Isolations {
		dsn := DSN("idemlab:pw@unix(/run/x.sock)/idemlab?clientFoundRows=true", level)
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("mysql.ParseDSN(DSN(…, %q)) error = %v", level, err)
		}
		want := map[string]string{
			"tx_isolation":             "'" + map[lab.Isolation]string{lab.ReadCommitted: "READ-COMMITTED", lab.RepeatableRead: "REPEATABLE-READ", lab.Serializable: "SERIALIZABLE"}[level] + "'",
			"innodb_lock_wait_timeout": "2",
			"max_statement_time":       "5",
		}
		for k, v := range want {
			if got := cfg.Params[k]; got != v {
				t.Errorf("DSN(…, %q) sets %s = %q, want %q", level, k, got, v)
			}
		}
		if !cfg.ParseTime || !cfg.InterpolateParams || cfg.ClientFoundRows {
			t.Errorf("DSN(…, %q) = parseTime %v, interpolateParams %v, clientFoundRows %v, want true, true, false",
				level, cfg.ParseTime, cfg.InterpolateParams, cfg.ClientFoundRows)
		}
		if cfg.Net != "unix" || cfg.Addr != "/run/x.sock" || cfg.User != "idemlab" || cfg.DBName != "idemlab" {
			t.Errorf("DSN(…, %q) connects to %s(%s) as %s, database %s, want unix(/run/x.sock) as idemlab, database idemlab",
				level, cfg.Net, cfg.Addr, cfg.User, cfg.DBName)
		}
	}
}

// TestClassify holds Classify to each error number the handlers meet, as
// the driver returns them, bare and wrapped.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		number    uint16
		want      string
		retryable bool
	}{
		{1213, "busy", true},
		{1020, "busy", true},
		{1205, "busy", false},
		{1317, "busy", false},
		{1969, "busy", false},
		{1452, "unknown account", false},
		{1048, "invalid event", false},
		{4025, "invalid event", false},
		{1406, "invalid event", false},
		{1264, "invalid event", false},
		{1062, "other error", false},
	} {
		me := &mysql.MySQLError{Number: c.number, Message: "from the server"}
		for _, err := range []error{me, fmt.Errorf("exec: %w", me)} {
			got := Classify(context.Background(), err)
			if kind := lab.ErrorKind(got); kind != c.want {
				t.Errorf("ErrorKind(Classify(%v)) = %q, want %q", err, kind, c.want)
			}
			if !errors.Is(got, me) {
				t.Errorf("Classify(%v) = %v, which does not wrap the driver's error", err, got)
			}
			if r := lab.Retryable(got); r != c.retryable {
				t.Errorf("Retryable(Classify(%v)) = %v, want %v", err, r, c.retryable)
			}
		}
	}
	if Wrap(nil) != nil {
		t.Errorf("Wrap(nil) = %v, want nil", Wrap(nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := Classify(ctx, sql.ErrTxDone); lab.ErrorKind(got) != "busy" {
		t.Errorf("Classify(cancelled, %v) = %v, want busy", sql.ErrTxDone, got)
	}
	plain := errors.New("1213")
	if Wrap(plain) != plain {
		t.Errorf("Wrap(%v) = %v, want it unchanged", plain, Wrap(plain))
	}
}

// flaky fails its first n deliveries with err, then applies.
type flaky struct {
	n     int
	err   error
	calls int
}

func (f *flaky) Process(context.Context, lab.Event) (lab.Outcome, error) {
	f.calls++
	if f.calls <= f.n {
		return 0, f.err
	}
	return lab.Applied, nil
}

// TestRetry: a deadlock (1213) and a changed record (1020) are run again,
// at most postgres.Linear.Attempts times; a lock wait timeout (1205) is
// not. In a synctest bubble: the pauses take no real time.
func TestRetry(t *testing.T) {
	attempts := postgres.Linear.Attempts
	for _, c := range []struct {
		number uint16
		n      int
		calls  int
		want   string
	}{
		{1213, 1, 2, ""},
		{1020, 3, 4, ""},
		{1213, attempts, attempts, "busy"},
		{1205, 1, 1, "busy"},
	} {
		synctest.Test(t, func(t *testing.T) {
			f := &flaky{n: c.n, err: Classify(context.Background(), &mysql.MySQLError{Number: c.number})}
			_, err := Retry(f).Process(context.Background(), lab.Event{})
			if got := lab.ErrorKind(err); got != c.want || f.calls != c.calls {
				t.Errorf("Retry(fails %d× with %d).Process = %q after %d calls, want %q after %d", c.n, c.number, got, f.calls, c.want, c.calls)
			}
		})
	}
}

// TestDSNOnServer asks a real server (IDEMLAB_MARIADB) what DSN's
// settings became on the session.
func TestDSNOnServer(t *testing.T) {
	server := os.Getenv("IDEMLAB_MARIADB")
	if server == "" {
		t.Skip("IDEMLAB_MARIADB is not set: eval \"$(.ci/mariadb-start)\" to run it")
	}
	for _, level := range lab.Isolations {
		db, err := sql.Open("mysql", DSN(server, level))
		if err != nil {
			t.Fatal(err)
		}
		var iso string
		var lock, stmt float64
		err = db.QueryRow("SELECT @@tx_isolation, @@innodb_lock_wait_timeout, @@max_statement_time").Scan(&iso, &lock, &stmt)
		db.Close()
		if err != nil {
			t.Fatalf("on DSN(…, %q): %v", level, err)
		}
		if iso != Level(level) || lock != LockWaitTimeout || stmt != StatementTimeout {
			t.Errorf("DSN(…, %q) gives a session at %s, lock wait %v s, statements %v s, want %s, %d, %d",
				level, iso, lock, stmt, Level(level), LockWaitTimeout, StatementTimeout)
		}
	}
}
