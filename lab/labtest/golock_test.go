package labtest_test

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// TestGoLocksAreScheduled holds the scheduler to running a handler whose
// deliveries wait for each other on a process-wide sync.Mutex, as one
// process would: correct's handler behind such a lock keeps every
// guarantee of TwoAtOnce, in every interleaving, and the transcript says
// where the second delivery waited. Without the lock-aware scheduler the
// cell stopped, the deliveries wedged on the lock.
func TestGoLocksAreScheduled(t *testing.T) {
	var mu sync.Mutex
	v := wrapped("test/behindamutex", func(h lab.Processor) lab.Processor {
		return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
			mu.Lock()
			defer mu.Unlock()
			return h.Process(ctx, e)
		})
	})
	every := labtest.Scenario{Name: "EveryInterleaving", Short: "Every", Shows: "every interleaving of two", Run: func(r *labtest.Run) {
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(c *labtest.Run, db *labtest.DB, answers []labtest.Answer) {
			c.WantCounts(answers, 1, 1, 0)
			c.WantBalance(db, 1, 500)
		})
	}}
	for _, sc := range []labtest.Scenario{twoAtOnce, every} {
		cell := labtest.RunCell(t, sc, v)
		t.Log(cell.Transcript)
		if !cell.Pass {
			t.Errorf("RunCell(%s, correct behind a mutex) = %q, want a pass", sc.Name, cell.Failures)
			continue
		}
		if !strings.Contains(cell.Transcript, ": waits for a Go lock another delivery holds") {
			t.Errorf("RunCell(%s, correct behind a mutex).Transcript =\n%s\nwant a line saying a session waits for a Go lock", sc.Name, cell.Transcript)
		}
	}
	if cell := labtest.RunCell(t, twoAtOnce, correct.Variant); !cell.Pass {
		t.Errorf("RunCell(TwoAtOnce, correct) after it = %q, want a pass", cell.Failures)
	}
}

// TestQuietWhateverTheDumpAdds holds the Go-lock scheduler to seeing its
// bubble quiet whatever the runtime writes between a goroutine's wait and
// its bubble in a stack dump: how long the goroutine has waited, once that
// is a minute or more ("chan receive (durable), 1 minutes, synctest bubble
// 6"), or that it is locked to its thread. A goroutine so marked was
// counted as one that runs, the bubble never looked quiet, and the cell was
// stopped by the watchdog as blocked outside the database: the bubble's
// own root has waited a minute in every cell that runs longer, so every
// Go-lock cell did so a minute in. Here a goroutine of the cell waits
// locked to its thread (a minute's wait would take a minute) while
// correct's handler behind a mutex is delivered twice at once: the cell
// must end with its verdict, a pass, never stopped.
func TestQuietWhateverTheDumpAdds(t *testing.T) {
	var mu sync.Mutex
	v := wrapped("test/behindamutexbesidealockedthread", func(h lab.Processor) lab.Processor {
		return processorFunc(func(ctx context.Context, e lab.Event) (lab.Outcome, error) {
			mu.Lock()
			defer mu.Unlock()
			return h.Process(ctx, e)
		})
	})
	sc := labtest.Scenario{Name: "BesideALockedThread", Short: "Lockd", Shows: "two at once beside a thread-locked goroutine",
		Run: func(r *labtest.Run) {
			locked, stop := make(chan struct{}), make(chan struct{})
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				close(locked)
				<-stop
			}()
			<-locked
			defer close(stop)
			twoAtOnce.Run(r)
		}}
	cell := labtest.RunCell(t, sc, v)
	if !cell.Pass || strings.Contains(cell.Transcript, "STOPPED") {
		t.Fatalf("RunCell(%s, correct behind a mutex) = %q, want a pass\n%s", sc.Name, cell.Failures, cell.Transcript)
	}
	if !strings.Contains(cell.Transcript, ": waits for a Go lock another delivery holds") {
		t.Errorf("RunCell(%s, correct behind a mutex).Transcript =\n%s\nwant a line saying a session waits for a Go lock", sc.Name, cell.Transcript)
	}
}

// TestRowsAffectedAfterThePool holds the scheduler to running handlers
// that read a Result's RowsAffected after database/sql has put its
// connection back in the pool, where another delivery has taken it and is
// parked before its statement, inside database/sql's call into the driver,
// which holds the connection's lock that RowsAffected takes. The wait ends
// when the parked statement runs, as in production a statement later.
//
// In the planned story, each delivery reads on a connection of its own
// (db.Conn) around an UPDATE on the pool: A's UPDATE ends, B's takes its
// connection and is parked, and A, after its next read, waits in
// RowsAffected until B's UPDATE has run. The cell stopped, A taken for a
// delivery waiting for a Go lock of the handler's own; it must pass, the
// wait in its transcript, and tell the same story every run.
//
// The trigger's handler credits inside one autocommit INSERT … ON CONFLICT
// DO NOTHING and asks RowsAffected whether it inserted: on a pool of one
// connection, the delivery waiting for the connection takes it as the
// INSERT ends, and, as the runtime runs the two, is parked before the
// INSERT's RowsAffected takes the lock or after. Its cells must pass.
func TestRowsAffectedAfterThePool(t *testing.T) {
	planned := correct.Variant
	planned.Name, planned.Mistake, planned.Postgres, planned.MariaDB = "test/rowsaffectedbesideaparkeddelivery", "test handler", nil, nil
	planned.New = func(db *sql.DB) lab.Processor { return readsAround{db, correct.New(db)} }
	story := labtest.Scenario{Name: "Planned", Short: "Plan", Shows: "B parked on the connection of A's Result", Run: func(r *labtest.Run) {
		db := r.OpenScheduled()
		e1 := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		e2 := lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 300}
		answers, _ := db.Interleave(labtest.Plan("A1 A2 B1 A3 B2 B3"), []lab.Event{e1}, []lab.Event{e2})
		r.WantCounts(answers, 2, 0, 0)
		r.WantBalance(db, 1, 800)
	}}
	first := labtest.RunCell(t, story, planned)
	if !first.Pass {
		t.Fatalf("RunCell(%s, RowsAffected beside a parked delivery) = %q, want a pass\n%s", story.Name, first.Failures, first.Transcript)
	}
	if !strings.Contains(first.Transcript, "A: waits for a Go lock another delivery holds") {
		t.Errorf("RunCell(%s, RowsAffected beside a parked delivery).Transcript =\n%s\nwant a line saying A waits", story.Name, first.Transcript)
	}
	if again := labtest.RunCell(t, story, planned); again.Transcript != first.Transcript {
		t.Errorf("RunCell(%s, RowsAffected beside a parked delivery), run again, told\n%s\nwant the first run's\n%s",
			story.Name, again.Transcript, first.Transcript)
	}

	trigger := correct.Variant
	trigger.Name, trigger.Mistake, trigger.Postgres, trigger.MariaDB = "test/rowsaffectedafterthetrigger", "test handler", nil, nil
	trigger.Schema = correct.Schema + `
CREATE TRIGGER inbox_credit AFTER INSERT ON inbox
BEGIN
	UPDATE accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id;
END;
`
	trigger.New = func(db *sql.DB) lab.Processor {
		db.SetMaxOpenConns(1)
		return triggerCredit{db}
	}
	every := labtest.Scenario{Name: "EveryInterleaving", Short: "Every", Shows: "every interleaving of two", Run: func(r *labtest.Run) {
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(c *labtest.Run, db *labtest.DB, answers []labtest.Answer) {
			c.WantCounts(answers, 1, 1, 0)
			c.WantBalance(db, 1, 500)
		})
	}}
	for _, sc := range []labtest.Scenario{twoAtOnce, every} {
		if cell := labtest.RunCell(t, sc, trigger); !cell.Pass {
			t.Errorf("RunCell(%s, a trigger's credit read with RowsAffected) = %q, want a pass\n%s", sc.Name, cell.Failures, cell.Transcript)
		}
	}
}

// readsAround reads on a connection of its own, runs an UPDATE that
// changes nothing on the pool, reads again on its own connection, and
// only then reads the UPDATE's RowsAffected; then it hands the event to h.
type readsAround struct {
	db *sql.DB
	h  lab.Processor
}

func (p readsAround) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	own, err := p.db.Conn(ctx)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer own.Close()
	var n int64
	if err := own.QueryRowContext(ctx, `SELECT count(*) FROM inbox`).Scan(&n); err != nil {
		return 0, lab.Classify(err)
	}
	res, err := p.db.ExecContext(ctx, `UPDATE accounts SET balance = balance WHERE id = $1`, e.AccountID)
	if err != nil {
		return 0, lab.Classify(err)
	}
	if err := own.QueryRowContext(ctx, `SELECT count(*) FROM inbox`).Scan(&n); err != nil {
		return 0, lab.Classify(err)
	}
	if _, err := res.RowsAffected(); err != nil {
		return 0, err
	}
	if err := own.Close(); err != nil {
		return 0, err
	}
	return p.h.Process(ctx, e)
}

// triggerCredit inserts the event's inbox row in one autocommit statement,
// whose trigger credits the account, and compares a repeat's payload with
// the stored row.
type triggerCredit struct{ db *sql.DB }

func (h triggerCredit) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	res, err := h.db.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)
		ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, lab.Classify(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if inserted == 1 {
		return lab.Applied, nil
	}
	var account, amount int64
	if err := h.db.QueryRowContext(ctx, `SELECT account_id, amount FROM inbox WHERE source = $1 AND event_id = $2`,
		e.Source, e.EventID).Scan(&account, &amount); err != nil {
		return 0, lab.Classify(err)
	}
	if account != e.AccountID || amount != e.Amount {
		return 0, fmt.Errorf("%w: %s was applied with account=%d amount=%d", lab.ErrPayloadConflict, e.Key(), account, amount)
	}
	return lab.Duplicate, nil
}
