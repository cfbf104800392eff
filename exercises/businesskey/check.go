package businesskey

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"idemlab/exercises"
	"idemlab/lab"
)

// Processor is what the exercise asks for.
type Processor interface {
	Process(ctx context.Context, p Payment) (lab.Outcome, error)
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

// Check is the exercise's check: order-42 paid as evt-1, then again as
// evt-2, then evt-1 repeated, is activated once; order-43 still activates.
func Check(t *testing.T, s Service) []string {
	db := exercises.OpenDB(t, s.DSN, s.Schema+`; INSERT INTO orders (id) VALUES ('order-42'), ('order-43')`)
	h := s.New(db)
	var failures []string
	for _, step := range []struct {
		p    Payment
		want lab.Outcome
	}{
		{Payment{"provider-a", "evt-1", "order-42", 500}, lab.Applied},
		{Payment{"provider-a", "evt-2", "order-42", 500}, lab.Duplicate},
		{Payment{"provider-a", "evt-1", "order-42", 500}, lab.Duplicate},
		{Payment{"provider-a", "evt-3", "order-43", 700}, lab.Applied},
	} {
		if got, err := h.Process(context.Background(), step.p); err != nil || got != step.want {
			failures = append(failures, fmt.Sprintf("Process(%+v) = %v, %v, want %v, nil", step.p, got, err, step.want))
		}
	}
	for order, want := range map[string]int{"order-42": 1, "order-43": 1} {
		var got int
		if err := db.QueryRow(`SELECT activations FROM orders WHERE id = ?`, order).Scan(&got); err != nil || got != want {
			failures = append(failures, fmt.Sprintf("activations of %s = %d (%v), want %d", order, got, err, want))
		}
	}
	return failures
}
