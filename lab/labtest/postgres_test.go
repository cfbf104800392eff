package labtest

import (
	"context"
	"database/sql"
	"net/url"
	"testing"

	"idemlab/lab"
)

// connectPostgres connects to the server IDEMLAB_PG names for one test, and
// drops the lab's database when it ends; without the variable the test
// skips.
func connectPostgres(t *testing.T) *Server {
	t.Helper()
	srv, why, err := ConnectPostgres()
	if err != nil {
		t.Fatal(err)
	}
	if srv == nil {
		t.Skip(why)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("dropping the lab's database: %v", err)
		}
	})
	return srv
}

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
	srv := connectPostgres(t)
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
