package labtest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
)

// spelled is a handler that writes its transaction out as statements on a
// connection of its own (db.Conn): BEGIN IMMEDIATE, the inbox row, the
// credit, COMMIT, and a ROLLBACK deferred before BEGIN.
type spelled struct{ db *sql.DB }

func (h spelled) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	conn, err := h.db.Conn(ctx)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer conn.Close()
	committed := false
	defer func() {
		if !committed {
			if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
				conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}
	}()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return 0, lab.Classify(err)
	}
	res, err := conn.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)
		ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, lab.Classify(err)
	}
	outcome := lab.Duplicate
	if n, err := res.RowsAffected(); err != nil {
		return 0, err
	} else if n == 1 {
		outcome = lab.Applied
		if _, err := conn.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID); err != nil {
			return 0, lab.Classify(err)
		}
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		return 0, lab.Classify(err)
	}
	committed = true
	return outcome, nil
}

// TestSpelledTransactionHoldsTheLock requires the scheduler to see a
// transaction a handler writes out as statements (BEGIN IMMEDIATE … COMMIT
// on a db.Conn) as it sees one of database/sql's: the deliveries waiting
// for the write lock wait for its COMMIT, as they do on a real clock,
// rather than retry the lock after each of its statements and run out of
// their busy timeout (5 s) on the fake clock while it still holds the lock.
func TestSpelledTransactionHoldsTheLock(t *testing.T) {
	v := lab.Variant{Name: "spelled", Schema: correct.Schema, DSN: correct.DSN,
		New: func(db *sql.DB) lab.Processor { return spelled{db} }}
	// Enough that the last deliveries to get the lock would run out of a 5 s
	// busy timeout if each statement of the others cost them up to 100 ms of
	// fake time (maxBusyPoll).
	const deliveries = 24
	cell := RunCell(t, Scenario{Name: "SpelledConcurrently", Run: func(r *Run) {
		db := r.Open()
		var sessions [][]lab.Event
		for i := range deliveries {
			sessions = append(sessions, []lab.Event{{Source: "provider-a", EventID: fmt.Sprintf("evt-%d", i), AccountID: 1, Amount: 1}})
		}
		answers := db.Concurrently(sessions...)
		if applied, duplicate, failed := Count(answers); applied != deliveries || duplicate != 0 || failed != 0 {
			r.Errorf("Concurrently(%d distinct events) = applied %d, duplicate %d, failed %d, want applied %d",
				deliveries, applied, duplicate, failed, deliveries)
		}
	}}, v)
	if !cell.Pass {
		t.Errorf("RunCell(SpelledConcurrently, spelled) failed: %q\n%s", cell.Failures, cell.Transcript)
	}
}
