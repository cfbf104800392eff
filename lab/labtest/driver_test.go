package labtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/lab"
)

// recorder is a minimal handler for testing the driver: one transaction that
// inserts the event into the inbox and credits the account.
type recorder struct{ db *sql.DB }

func (h recorder) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO inbox VALUES (?, ?, ?, ?)`, e.Source, e.EventID, e.AccountID, e.Amount); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = ?`, e.Amount, e.AccountID); err != nil {
		return 0, err
	}
	return lab.Applied, tx.Commit()
}

var testVariant = lab.Variant{
	Name: "test",
	Schema: `CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL DEFAULT 0);
		CREATE TABLE inbox (source TEXT, event_id TEXT, account_id INTEGER, amount INTEGER, PRIMARY KEY (source, event_id));`,
	DSN: func(path string) string {
		return lab.SQLiteFile(path) + "?_txlock=immediate&_pragma=busy_timeout(5000)"
	},
	New: func(db *sql.DB) lab.Processor { return recorder{db} },
}

// Every fault position must leave the database as it was when the handler
// reports the error, except a fault after COMMIT, which strikes once the
// transaction is durable. In particular a fault before COMMIT must really
// roll back, and a fault after BEGIN must not leave the connection inside a
// transaction.
func TestFaultsRollBack(t *testing.T) {
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	for _, op := range []Op{OpBegin, OpInsert, OpUpdate, OpCommit} {
		for _, when := range []When{Before, After} {
			t.Run(fmt.Sprintf("%s %s", when, op), func(t *testing.T) {
				r := NewRun(t, testVariant)
				db := r.Open()
				db.Inject(Fault{When: when, Op: op})
				a := db.Deliver(e)
				if !errors.Is(a.Err, ErrInjected) {
					t.Fatalf("Deliver(%v) with a fault %s %s = %v, want an injected fault", e, when, op, a)
				}
				committed := op == OpCommit && when == After
				wantRows, wantBalance := 0, int64(0)
				if committed {
					wantRows, wantBalance = 1, 500
				}
				if got := db.InboxRows(); got != wantRows {
					t.Errorf("after a fault %s %s: inbox rows = %d, want %d", when, op, got, wantRows)
				}
				if got := db.Balance(1); got != wantBalance {
					t.Errorf("after a fault %s %s: balance = %d, want %d", when, op, got, wantBalance)
				}
				if !committed {
					// The one-shot fault is spent: the same delivery now applies,
					// which also proves no connection was left in a transaction.
					if a := db.Deliver(e); a.Err != nil || a.Outcome != lab.Applied {
						t.Errorf("redelivery after a fault %s %s = %v, want applied", when, op, a)
					}
				}
				r.Close()
				if r.Failed() && !committed {
					t.Errorf("invariants after a fault %s %s: %v", when, op, r.Failures())
				}
			})
		}
	}
}

// A persistent fault strikes every time until lifted.
func TestPersistentFault(t *testing.T) {
	r := NewRun(t, testVariant)
	db := r.Open()
	db.Inject(Fault{When: Before, Op: OpUpdate, Table: "accounts", Persistent: true})
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	for i := range 3 {
		if a := db.Deliver(e); !errors.Is(a.Err, ErrInjected) {
			t.Fatalf("delivery %d under a persistent fault = %v, want an injected fault", i+1, a)
		}
	}
	db.Lift()
	if a := db.Deliver(e); a.Outcome != lab.Applied {
		t.Fatalf("delivery after Lift = %v, want applied", a)
	}
	r.Close()
	if r.Failed() {
		t.Errorf("invariants: %v", r.Failures())
	}
}

// HoldDelivery works on SQLite too: the stalled delivery's INSERT holds
// the write lock, so a second delivery waits out its busy timeout (on the
// bubble's clock) and answers busy; released, the stalled one answers an
// error and leaves nothing, and the redelivery applies.
func TestHoldDeliverySQLite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewRun(t, testVariant)
		db := r.Open()
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		release := db.HoldDelivery(e)
		if a := db.Deliver(e, Delivery{Unchecked: true, Within: time.Minute}); !errors.Is(lab.Classify(a.Err), lab.ErrBusy) {
			t.Errorf("a second delivery while one is stalled = %v, want busy", a)
		}
		if a := release(); a.Err == nil {
			t.Errorf("the stalled delivery, released = %v, want an error", a)
		}
		if n := db.InboxRows(); n != 0 {
			t.Errorf("after the release: %d inbox rows, want 0", n)
		}
		if a := db.Deliver(e, Delivery{Unchecked: true}); a.Err != nil || a.Outcome != lab.Applied {
			t.Errorf("the redelivery = %v, want applied", a)
		}
		r.Close()
	})
}

// explicitRollback is recorder without its deferred Rollback: it rolls back
// on its error paths only, so a panic between BEGIN and COMMIT skips it.
type explicitRollback struct{ db *sql.DB }

func (h explicitRollback) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO inbox VALUES (?, ?, ?, ?)`,
		e.Source, e.EventID, e.AccountID, e.Amount); err != nil {
		tx.Rollback()
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = ?`,
		e.Amount, e.AccountID); err != nil {
		tx.Rollback()
		return 0, err
	}
	return lab.Applied, tx.Commit()
}

// An injected panic next to a statement the handler runs as an Exec is
// the delivery's error answer, not a failure of the run: the handler's
// deferred Rollback ends the transaction, nothing is kept, and the
// redelivery applies. A handler without a deferred Rollback leaves the
// transaction open, and the run says so.
func TestInjectedPanicRollsBack(t *testing.T) {
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	noDefer := testVariant
	noDefer.Name = "test/explicitrollback"
	noDefer.New = func(db *sql.DB) lab.Processor { return explicitRollback{db} }
	for _, v := range []lab.Variant{testVariant, noDefer} {
		for _, op := range []Op{OpInsert, OpUpdate} {
			for _, when := range []When{Before, After} {
				t.Run(fmt.Sprintf("%s/%s %s", v.Name, when, op), func(t *testing.T) {
					r := NewRun(t, v)
					db := r.Open()
					db.Inject(Fault{When: when, Op: op, Panic: true})
					a := db.Deliver(e)
					if !errors.Is(a.Err, ErrPanicked) {
						t.Fatalf("Deliver(%v) with a panic %s %s = %v, want an error wrapping ErrPanicked",
							e, when, op, a)
					}
					if rows, balance := db.InboxRows(), db.Balance(1); rows != 0 || balance != 0 {
						t.Errorf("after a panic %s %s: inbox rows, balance = %d, %d, want 0, 0",
							when, op, rows, balance)
					}
					if a := db.Deliver(e); a.Err != nil || a.Outcome != lab.Applied {
						t.Errorf("redelivery after a panic %s %s = %v, want applied", when, op, a)
					}
					r.Close()
					const open = "connection still in a transaction after Process returned"
					failures := fmt.Sprint(r.Failures())
					switch {
					case v.Name == testVariant.Name && r.Failed():
						t.Errorf("run with a panic %s %s: failures %s, want none", when, op, failures)
					case v.Name == noDefer.Name && !strings.Contains(failures, open):
						t.Errorf("run with a panic %s %s: failures %s, want %q", when, op, failures, open)
					}
				})
			}
		}
	}
}

// A panic strikes only a statement run as an Exec: BEGIN and COMMIT, which
// database/sql does not unwind cleanly, take none.
func TestPanicSkipsBeginAndCommit(t *testing.T) {
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	for _, op := range []Op{OpBegin, OpCommit} {
		r := NewRun(t, testVariant)
		db := r.Open()
		f := db.Inject(Fault{When: Before, Op: op, Panic: true})
		if a := db.Deliver(e); a.Err != nil || a.Outcome != lab.Applied {
			t.Errorf("Deliver(%v) with a panic before %s = %v, want applied", e, op, a)
		}
		if n := f.Fired(); n != 0 {
			t.Errorf("a panic before %s: Fired() = %d, want 0", op, n)
		}
		r.Close()
	}
}
