package labtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

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
	r := NewPostgresRun(t, v, srv, lab.ReadCommitted)
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
