package retention

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"idemlab/exercises"
	"idemlab/lab"
)

// Processor is the handler of the exercise.
type Processor interface {
	Process(ctx context.Context, e lab.Event, now time.Time) (lab.Outcome, error)
}

// Service is one implementation of the exercise: schema, DSN, handler and
// purge policy.
type Service struct {
	Schema string
	DSN    func(path string) string
	New    func(db *sql.DB) Processor
	Purge  func(ctx context.Context, db *sql.DB, now time.Time) (int64, error)
}

// Starting is this package, the exercise's starting point.
var Starting = Service{Schema: Schema, DSN: DSN, New: func(db *sql.DB) Processor { return New(db) }, Purge: Purge}

// Check is the exercise's check: evt-1 delivered, history purged an hour
// later, evt-1 redelivered an hour after that must be a duplicate; a purge
// once the redelivery window has passed must free the row.
func Check(t *testing.T, s Service) []string {
	ctx := context.Background()
	db := exercises.OpenDB(t, s.DSN, s.Schema+`; INSERT INTO accounts (id) VALUES (1)`)
	h := s.New(db)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	var failures []string
	fail := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }

	if got, err := h.Process(ctx, e, t0); err != nil || got != lab.Applied {
		fail("Process(%v) at t0 = %v, %v, want applied", e, got, err)
	}
	if _, err := s.Purge(ctx, db, t0.Add(time.Hour)); err != nil {
		fail("Purge(t0+1h): %v", err)
	}
	if got, err := h.Process(ctx, e, t0.Add(2*time.Hour)); err != nil || got != lab.Duplicate {
		fail("Process(%v) at t0+2h, after Purge(t0+1h) = %v, %v, want duplicate: the provider may redeliver for %v", e, got, err, RedeliveryWindow)
	}
	var balance int64
	if err := db.QueryRow(`SELECT balance FROM accounts WHERE id = 1`).Scan(&balance); err != nil || balance != 500 {
		fail("balance after the redelivery = %d (%v), want 500", balance, err)
	}
	late := t0.Add(RedeliveryWindow + 24*time.Hour)
	if n, err := s.Purge(ctx, db, late); err != nil || n != 1 {
		fail("Purge(t0+%v) deleted %d rows (%v), want 1: history past the redelivery window must go", late.Sub(t0), n, err)
	}
	return failures
}
