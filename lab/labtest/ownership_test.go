package labtest

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/lab"
)

// These tests hold the engine to its rules of ownership: every statement
// belongs to the delivery that issued it, a delivery ends its own
// transaction, a session on several connections of a pool is still one
// session, and a wait the bubble cannot see is named at once.

// plainBegin is testVariant with a plain BEGIN: its first statement, the
// INSERT, waits for the write lock.
func plainBegin() lab.Variant {
	v := testVariant
	v.DSN = func(path string) string { return lab.SQLiteFile(path) + "?_pragma=busy_timeout(5000)" }
	return v
}

// A deadline that passes while the INSERT waits for the lock makes
// database/sql roll the transaction back on its own goroutine. That
// ROLLBACK is the delivery's last step: it is logged before the answer, and
// a fault addressed by number to the next delivery strikes the next one.
func TestLateRollbackBelongsToItsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewRun(t, plainBegin())
		db := r.Open()
		release := db.HoldWriteLock()
		a := db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 5}, Delivery{Unchecked: true, Within: 50 * time.Millisecond})
		release()
		if !errors.Is(a.Err, context.DeadlineExceeded) {
			t.Fatalf("Process under a held lock = %v, want the deadline", a)
		}
		lines := strings.Split(r.Transcript.String(), "\n")
		rollback := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "A3: ROLLBACK") })
		answer := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "A: answer") })
		if rollback < 0 || rollback > answer {
			t.Errorf("A's ROLLBACK by database/sql is not logged before A's answer:\n%s", r.Transcript.String())
		}
		if n := db.Steps("A"); n != 3 {
			t.Errorf("Steps(A) = %d, want 3 (BEGIN, INSERT, ROLLBACK)", n)
		}

		f := db.Inject(Fault{When: Before, N: 3})
		b := db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 5}, Delivery{Unchecked: true})
		if !errors.Is(b.Err, ErrInjected) || f.Fired() != 1 {
			t.Errorf("B with a fault before statement 3 = %v, fired %d times; want the injected error, once:\n%s", b, f.Fired(), r.Transcript.String())
		}
		r.Close()
		if r.Failed() {
			t.Errorf("the run failed: %v", r.Failures())
		}
	})
}

// leaky forgets to end its transaction on the duplicate path.
type leaky struct{ db *sql.DB }

func (h leaky) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO inbox VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		tx.Rollback()
		return 0, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return lab.Duplicate, nil // the transaction stays open
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = ?`, e.Amount, e.AccountID); err != nil {
		tx.Rollback()
		return 0, err
	}
	return lab.Applied, tx.Commit()
}

// A transaction the handler leaves open is the handler's finding, not
// something the lab cleans up silently; the lab still ends it, so that the
// next delivery can take the lock.
func TestLeakedTransactionIsAFinding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := testVariant
		v.New = func(db *sql.DB) lab.Processor { return leaky{db} }
		r := NewRun(t, v)
		db := r.Open()
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 5}
		for range 3 {
			db.Deliver(e)
		}
		r.Close()
		const want = "B: Process(provider-a/evt-1 account=1 amount=5): connection still in a transaction after Process returned"
		if got := r.Failures(); len(got) != 2 || got[0] != want {
			t.Errorf("failures = %q, want 2, the first %q", got, want)
		}
	})
}

// poolReader reads on the pool, outside its transaction, while the
// transaction is open: slower, not wrong.
type poolReader struct{ db *sql.DB }

func (h poolReader) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var n int
	if err := h.db.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE id = ?`, e.AccountID).Scan(&n); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO inbox VALUES (?, ?, ?, ?)`, e.Source, e.EventID, e.AccountID, e.Amount); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = ?`, e.Amount, e.AccountID); err != nil {
		return 0, err
	}
	return lab.Applied, tx.Commit()
}

// A statement on another connection of the pool does not end the session's
// transaction: the scheduler must not move the fake clock for waiters then.
// 64 deliveries on 8 sessions take a few milliseconds of fake time, not
// seconds (which would run waiters into their busy timeout).
func TestPoolStatementKeepsTheTransaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := testVariant
		v.New = func(db *sql.DB) lab.Processor { return poolReader{db} }
		r := NewRun(t, v)
		db := r.Open()
		sessions := make([][]lab.Event, 8)
		for i := range 64 {
			sessions[i%8] = append(sessions[i%8], lab.Event{Source: "provider-a", EventID: "evt-" + string(rune('A'+i%26)) + string(rune('a'+i/26)), AccountID: 1, Amount: 1})
		}
		start := time.Now()
		answers := db.Concurrently(sessions...)
		if elapsed := time.Since(start); elapsed > time.Second {
			t.Errorf("64 deliveries took %v of fake time, want well under a second", elapsed)
		}
		if a, _, f := Count(answers); a != 64 || f != 0 {
			t.Errorf("64 deliveries: %d applied, %d errors; want 64, 0", a, f)
		}
		r.Close()
	})
}

// blindHandler calls the database with a context that is never done.
type blindHandler struct {
	db  *sql.DB
	ctx func(context.Context) context.Context
}

func (h blindHandler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	return recorder{h.db}.Process(h.ctx(ctx), e)
}

// Such a context would make SQLite wait for the held lock in real time, for
// the whole busy timeout. The call fails at once instead, and the run says
// what the handler did.
func TestBlindWaitIsNamed(t *testing.T) {
	for _, c := range []struct {
		name string
		ctx  func(context.Context) context.Context
		want string
	}{
		{"Background", func(context.Context) context.Context { return context.Background() }, "a: called the database without the delivery's context"},
		{"WithoutCancel", context.WithoutCancel, "a: called the database with a context that is never done"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := testVariant
				v.New = func(db *sql.DB) lab.Processor { return blindHandler{db, c.ctx} }
				r := NewRun(t, v)
				db := r.Open()
				release := db.HoldWriteLock()
				a := db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 5}, Delivery{Unchecked: true})
				release()
				if a.Err == nil {
					t.Errorf("Process = %v, want an error", a)
				}
				r.Close()
				if got := r.Failures(); len(got) != 1 || !strings.HasPrefix(strings.ToLower(got[0]), c.want) {
					t.Errorf("failures = %q, want one starting %q", got, c.want)
				}
			})
		})
	}
}

// cancelsOwn leaves its transaction to database/sql, which rolls it back
// when the handler cancels its own context on the way out.
type cancelsOwn struct{ db *sql.DB }

func (h cancelsOwn) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO inbox VALUES (?, ?, ?, ?)`, e.Source, e.EventID, e.AccountID, e.Amount); err != nil {
		return 0, err
	}
	return 0, errors.New("gave up") // no Rollback: the cancel ends the transaction
}

// That is database/sql's documented behaviour, not a leak: the delivery
// waits for the ROLLBACK, which is its own last step.
func TestCancelledTransactionIsNotALeak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := testVariant
		v.New = func(db *sql.DB) lab.Processor { return cancelsOwn{db} }
		r := NewRun(t, v)
		db := r.Open()
		db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 5})
		if n := db.Steps("A"); n != 3 {
			t.Errorf("Steps(A) = %d, want 3 (BEGIN, INSERT, ROLLBACK):\n%s", n, r.Transcript.String())
		}
		r.Close()
		if r.Failed() {
			t.Errorf("failures = %q, want none", r.Failures())
		}
	})
}
