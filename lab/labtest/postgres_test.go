package labtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/lab"
)

// pgHandler is the correct handler's transaction, reduced: the inbox row,
// then the credit when it is new.
type pgHandler struct{ db *sql.DB }

func (h pgHandler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES ($1, $2, $3, $4) ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, lab.Classify(err)
	}
	outcome := lab.Duplicate
	if n, _ := res.RowsAffected(); n == 1 {
		outcome = lab.Applied
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID); err != nil {
			return 0, lab.Classify(err)
		}
	}
	return outcome, lab.Classify(tx.Commit())
}

// pgVariant runs pgHandler at READ COMMITTED with the given lock_timeout.
func pgVariant(lockTimeout string) lab.Variant {
	v := testVariant
	v.New = func(db *sql.DB) lab.Processor { return pgHandler{db} }
	v.Postgres = &lab.Postgres{
		Schema: `CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL DEFAULT 0);
			CREATE TABLE inbox (source TEXT, event_id TEXT, account_id BIGINT, amount BIGINT, PRIMARY KEY (source, event_id));`,
		DSN: func(server string, level lab.Isolation) string {
			u, _ := url.Parse(server)
			q := u.Query()
			q.Set("lock_timeout", lockTimeout)
			q.Set("statement_timeout", "5s")
			u.RawQuery = q.Encode()
			return u.String()
		},
	}
	return v
}

// A database that Open gives keeps the variant's timeouts; one that
// OpenScheduled gives has none, so that a scheduled wait is ended by the
// scheduler stepping the holder, not by the server's clock. The variant
// here waits at most 1 ms for a lock: in every interleaving where B's
// INSERT waits for A's row, A's COMMIT comes long after that, so a lab
// that kept the timeout would answer busy there instead of duplicate.
func TestPostgresScheduledWaits(t *testing.T) {
	srv := NeedPostgres(t)
	v := pgVariant("1ms")
	r := NewServerRun(t, v, srv, Level{Isolation: lab.ReadCommitted})
	for _, c := range []struct {
		open func(...Account) *DB
		name string
		want string
	}{{r.Open, "Open", "1ms"}, {r.OpenScheduled, "OpenScheduled", "0"}} {
		db := c.open()
		for _, setting := range []string{"lock_timeout", "statement_timeout"} {
			want := c.want
			if setting == "statement_timeout" && c.name == "Open" {
				want = "5s"
			}
			var got string
			if err := db.Pool().QueryRow("SHOW " + setting).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s(): SHOW %s = %s, want %s", c.name, setting, got, want)
			}
		}
	}
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 5}
	waited := 0
	perms := r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(c *Run, db *DB, answers []Answer) {
		c.WantCounts(answers, 1, 1, 0)
		c.WantBalance(db, 1, 5)
	})
	for _, p := range perms {
		if len(p.Waited) > 0 {
			waited++
		}
		if !p.Held() {
			t.Errorf("interleaving %s = %s: %v", p.Schedule, p.Outcome, p.Failures)
		}
	}
	if waited == 0 {
		t.Errorf("Interleavings(a duplicate race): no interleaving waited, want some (%d run)", len(perms))
	}
	r.Close()
}

// detector is the shape of waitsFor: does server process pid wait for a
// lock one of among holds?
type detector func(ctl *sql.DB, pid int64, among []int64) (bool, error)

// checkDetector puts detect to the situations the scheduler meets and
// returns what it answered wrong. Sessions A, B and C are the test's; F is
// another client of the server. A holds a row that B waits for; F locks a
// table that C waits for. Whether a session waits is established
// independently, from pg_stat_activity's wait_event_type, before detect is
// asked.
func checkDetector(t *testing.T, srv *Server, detect detector) []string {
	t.Helper()
	ctx := context.Background()
	pool, err := sql.Open("pgx", srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(`CREATE TABLE IF NOT EXISTS det_row (id int PRIMARY KEY);
		CREATE TABLE IF NOT EXISTS det_other (id int)`); err != nil {
		t.Fatal(err)
	}
	conns := map[string]*sql.Conn{}
	pids := map[string]int64{}
	for _, name := range []string{"A", "B", "C", "F"} {
		c, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var pid int64
		if err := c.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		conns[name], pids[name] = c, pid
	}
	exec := func(name string, statements ...string) {
		for _, st := range statements {
			if _, err := conns[name].ExecContext(ctx, st); err != nil {
				t.Fatalf("%s: %s: %v", name, st, err)
			}
		}
	}
	exec("A", "BEGIN", "INSERT INTO det_row VALUES (1)")
	exec("F", "BEGIN", "LOCK TABLE det_other IN ACCESS EXCLUSIVE MODE")
	done := map[string]chan error{"B": make(chan error, 1), "C": make(chan error, 1)}
	go func() {
		_, err := conns["B"].ExecContext(ctx, "INSERT INTO det_row VALUES (1) ON CONFLICT DO NOTHING")
		done["B"] <- err
	}()
	go func() {
		_, err := conns["C"].ExecContext(ctx, "SELECT count(*) FROM det_other")
		done["C"] <- err
	}()
	for _, name := range []string{"B", "C"} {
		for {
			var lock bool
			if err := pool.QueryRow(`SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`,
				pids[name]).Scan(&lock); err != nil {
				t.Fatal(err)
			}
			if lock {
				break
			}
			<-time.After(pollEvery)
		}
	}
	among := []int64{pids["A"], pids["B"], pids["C"]}
	var wrong []string
	ask := func(situation, name string, want bool) {
		got, err := detect(srv.control, pids[name], among)
		if err != nil {
			t.Fatalf("detect(%s): %v", name, err)
		}
		if got != want {
			wrong = append(wrong, fmt.Sprintf("%s: detect(%s) = %v, want %v", situation, name, got, want))
		}
	}
	ask("waits for a session of the test", "B", true)
	ask("holds the lock, runs nothing", "A", false)
	ask("waits for another client of the server", "C", false)
	exec("A", "ROLLBACK")
	if err := <-done["B"]; err != nil {
		t.Fatalf("B: %v", err)
	}
	ask("got the lock since it was last asked", "B", false)
	exec("F", "ROLLBACK")
	if err := <-done["C"]; err != nil {
		t.Fatalf("C: %v", err)
	}
	if _, err := pool.Exec(`DELETE FROM det_row`); err != nil {
		t.Fatal(err)
	}
	return wrong
}

// The scheduler's wait detector must see a session waiting for another of
// the test's sessions, and nothing else: the wrong detectors below, each a
// plausible slip, must each be caught by checkDetector on the situation it
// gets wrong.
func TestPostgresWaitDetector(t *testing.T) {
	srv := NeedPostgres(t)
	if wrong := checkDetector(t, srv, waitsFor); len(wrong) > 0 {
		t.Errorf("waitsFor: %s", strings.Join(wrong, "; "))
	}
	stale := func() detector {
		seen := map[int64]bool{}
		return func(ctl *sql.DB, pid int64, among []int64) (bool, error) {
			if yes, ok := seen[pid]; ok {
				return yes, nil // the answer of the last time it was asked
			}
			yes, err := waitsFor(ctl, pid, among)
			seen[pid] = yes
			return yes, err
		}
	}
	for _, c := range []struct {
		name   string
		detect detector
		caught string // the situation it must get wrong
	}{
		{"never waits", func(*sql.DB, int64, []int64) (bool, error) { return false, nil },
			"waits for a session of the test"},
		{"always waits", func(*sql.DB, int64, []int64) (bool, error) { return true, nil },
			"holds the lock, runs nothing"},
		{"any blocker counts", func(ctl *sql.DB, pid int64, _ []int64) (bool, error) {
			var yes bool
			err := ctl.QueryRow(`SELECT cardinality(pg_blocking_pids($1)) > 0`, pid).Scan(&yes)
			return yes, err
		}, "waits for another client of the server"},
		{"remembers its answer", stale(), "got the lock since it was last asked"},
	} {
		wrong := checkDetector(t, srv, c.detect)
		if !slices.ContainsFunc(wrong, func(w string) bool { return strings.HasPrefix(w, c.caught+":") }) {
			t.Errorf("checkDetector(%s) = %q, want it caught where a session %s", c.name, wrong, c.caught)
		}
	}
}

// pgAutocommit is pgHandler without its transaction: the inbox row and the
// credit are statements of their own, as naive/checkthenact's are.
type pgAutocommit struct{ db *sql.DB }

func (h pgAutocommit) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	res, err := h.db.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES ($1, $2, $3, $4) ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, lab.Classify(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return lab.Duplicate, nil
	}
	if _, err := h.db.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID); err != nil {
		return 0, lab.Classify(err)
	}
	return lab.Applied, nil
}

// pgIgnoring is pgHandler with a bug: it ignores its INSERT's error and
// goes on to credit and commit. Released, a stalled delivery of it must
// still leave nothing: its process is gone, not just its statement.
type pgIgnoring struct{ db *sql.DB }

func (h pgIgnoring) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback()
	tx.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES ($1, $2, $3, $4) ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID); err != nil {
		return 0, lab.Classify(err)
	}
	return lab.Applied, lab.Classify(tx.Commit())
}

// holder is the shape of DB.HoldDelivery.
type holder func(db *DB, e lab.Event) (release func() Answer)

// checkHold puts hold to what LockTimeout needs of a stalled delivery, with
// handler new, and returns what it got wrong: while it holds, the event's
// row exists for nobody else and a second delivery of the event waits for
// it until the lock_timeout (busy); released, the stalled delivery fails
// and leaves nothing; a redelivery then applies.
func checkHold(t *testing.T, srv *Server, new func(*sql.DB) lab.Processor, hold holder) []string {
	t.Helper()
	v := pgVariant("50ms")
	v.Postgres.New = new
	r := NewServerRun(t, v, srv, Level{Isolation: lab.ReadCommitted})
	defer r.Close()
	db := r.Open()
	var wrong []string
	rows := func() int {
		var n int
		if err := srv.control.QueryRow("SELECT count(*) FROM " + db.pg.schema + ".inbox").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 5}
	release := hold(db, e)
	if n := rows(); n != 0 {
		wrong = append(wrong, fmt.Sprintf("holding: %d inbox rows seen from another connection, want 0", n))
	}
	if a := db.Deliver(e, Delivery{Unchecked: true}); !errors.Is(a.Err, lab.ErrBusy) {
		wrong = append(wrong, fmt.Sprintf("holding: a second delivery = %v, want busy (it waits for the row)", a))
	}
	if a := release(); a.Err == nil {
		wrong = append(wrong, fmt.Sprintf("released: the stalled delivery = %v, want an error (its connection is gone)", a))
	}
	if n := rows(); n != 0 {
		wrong = append(wrong, fmt.Sprintf("released: %d inbox rows, want 0", n))
	}
	if a := db.Deliver(e, Delivery{Unchecked: true}); a.Err != nil || a.Outcome != lab.Applied {
		wrong = append(wrong, fmt.Sprintf("released: the redelivery = %v, want applied", a))
	}
	return wrong
}

// HoldDelivery must hold the row the handler itself writes, uncommitted,
// whether the handler writes it in a transaction or as a statement of its
// own, and let it go without a trace. The wrong holds below, each a
// plausible slip, must each be caught by checkHold where it goes wrong.
func TestPostgresHoldDelivery(t *testing.T) {
	srv := NeedPostgres(t)
	inTx := func(db *sql.DB) lab.Processor { return pgHandler{db} }
	autocommit := func(db *sql.DB) lab.Processor { return pgAutocommit{db} }
	for name, new := range map[string]func(*sql.DB) lab.Processor{"in a transaction": inTx, "autocommit": autocommit} {
		if wrong := checkHold(t, srv, new, (*DB).HoldDelivery); len(wrong) > 0 {
			t.Errorf("HoldDelivery, the handler's INSERT %s: %s", name, strings.Join(wrong, "; "))
		}
	}
	failed := func() Answer { return Answer{Err: ErrInjected} }
	for _, c := range []struct {
		name   string
		hold   holder
		caught string // the start of what it must get wrong
	}{
		{"lets the delivery finish", func(db *DB, e lab.Event) func() Answer {
			db.Deliver(e, Delivery{Unchecked: true})
			return failed
		}, "holding: 1 inbox rows seen"},
		{"stops before the INSERT", func(db *DB, e lab.Event) func() Answer {
			return failed
		}, "holding: a second delivery"},
		{"commits when released", func(db *DB, e lab.Event) func() Answer {
			c, err := db.Pool().Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range []string{"BEGIN", fmt.Sprintf(`INSERT INTO inbox VALUES ('%s', '%s', %d, %d)`, e.Source, e.EventID, e.AccountID, e.Amount)} {
				if _, err := c.ExecContext(context.Background(), st); err != nil {
					t.Fatal(err)
				}
			}
			return func() Answer {
				defer c.Close()
				if _, err := c.ExecContext(context.Background(), "COMMIT"); err != nil {
					t.Fatal(err)
				}
				return failed()
			}
		}, "released: 1 inbox rows"},
	} {
		wrong := checkHold(t, srv, inTx, c.hold)
		if !slices.ContainsFunc(wrong, func(w string) bool { return strings.HasPrefix(w, c.caught) }) {
			t.Errorf("checkHold(%s) = %q, want it caught at %q", c.name, wrong, c.caught)
		}
	}
}

// errorTB records Errorf instead of failing the test.
type errorTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (e *errorTB) Errorf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errors = append(e.errors, fmt.Sprintf(format, args...))
}

// A statement refused for the server's lack of resources fails the test
// once per database, as the lab's trouble, whatever the variant: any code
// of class 53, wrapped or not (it reaches the lab through the driver's and
// the handler's error chains); a serialization failure and success do
// not; and a second refusal is not reported again.
func TestPostgresStarved(t *testing.T) {
	srv := NeedPostgres(t)
	oom := &pgconn.PgError{Code: "53200", Message: "out of shared memory"}
	for _, c := range []struct {
		name string
		errs []error
		want int
	}{
		{"success and 40001", []error{nil, &pgconn.PgError{Code: "40001"}}, 0},
		{"53200, wrapped", []error{fmt.Errorf("busy: %w", oom)}, 1},
		{"53300 too many connections", []error{&pgconn.PgError{Code: "53300", Message: "too many clients"}}, 1},
		{"53200 twice", []error{oom, oom}, 1},
	} {
		rec := &errorTB{TB: t}
		p := &serverDB{srv: srv}
		for _, err := range c.errs {
			p.starved(rec, err)
		}
		if len(rec.errors) != c.want {
			t.Errorf("starved(%s) reported %d times: %q, want %d", c.name, len(rec.errors), rec.errors, c.want)
		}
		for _, msg := range rec.errors {
			if !strings.Contains(msg, "SQLSTATE 53") {
				t.Errorf("starved(%s) = %q, want it to name the SQLSTATE", c.name, msg)
			}
		}
	}
}

// Released, a stalled delivery's process is gone, not just its statement: a
// handler that ignores its INSERT's error and commits keeps nothing either.
func TestPostgresHoldDeliveryLosesTheConnection(t *testing.T) {
	srv := NeedPostgres(t)
	v := pgVariant("50ms")
	v.Postgres.New = func(db *sql.DB) lab.Processor { return pgIgnoring{db} }
	r := NewServerRun(t, v, srv, Level{Isolation: lab.ReadCommitted})
	defer r.Close()
	db := r.Open()
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 5}
	release := db.HoldDelivery(e)
	a := release()
	var rows int
	if err := srv.control.QueryRow("SELECT count(*) FROM " + db.pg.schema + ".inbox").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if a.Err == nil || rows != 0 || db.Balance(1) != 0 {
		t.Errorf("HoldDelivery(%v) of a handler that ignores the error, released = %v, leaving %d inbox rows and balance %d, "+
			"want an error, 0 rows and balance 0", e, a, rows, db.Balance(1))
	}
	if a := db.Deliver(e, Delivery{Unchecked: true}); a.Err != nil || a.Outcome != lab.Applied {
		t.Errorf("the redelivery = %v, want applied: the pool must have dropped the lost connection", a)
	}
}
