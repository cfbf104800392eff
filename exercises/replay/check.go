package replay

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"idemlab/exercises"
	"idemlab/lab"
)

// Processor is what the exercise asks for: a handler that answers with
// receipts.
type Processor interface {
	Process(ctx context.Context, e lab.Event) (Receipt, error)
}

// Service is one implementation of the exercise: its schema, its DSN and
// its handler.
type Service struct {
	Schema string
	DSN    func(path string) string
	New    func(db *sql.DB) Processor
}

// Starting is this package, the exercise's starting point.
var Starting = Service{Schema: Schema, DSN: DSN, New: func(db *sql.DB) Processor { return New(db) }}

// Check is the exercise's check: evt-1 and then evt-2 credit account 1, and
// each repeat gets its own first receipt back, whatever the balance is now.
func Check(t *testing.T, s Service) []string {
	db := exercises.OpenDB(t, s.DSN, s.Schema+`; INSERT INTO accounts (id) VALUES (1)`)
	h := s.New(db)
	evt1 := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	evt2 := lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 300}
	var failures []string
	for _, step := range []struct {
		e    lab.Event
		want Receipt
	}{
		{evt1, Receipt{lab.Applied, 500}},
		{evt2, Receipt{lab.Applied, 800}},
		{evt1, Receipt{lab.Duplicate, 500}},
		{evt2, Receipt{lab.Duplicate, 800}},
	} {
		got, err := h.Process(context.Background(), step.e)
		if err != nil || got != step.want {
			failures = append(failures, fmt.Sprintf("Process(%v) = %+v, %v, want %+v, nil", step.e, got, err, step.want))
		}
	}
	return failures
}
