package retention

import (
	"context"
	"database/sql"
	"time"

	"idemlab/lab"
)

// Processor is the handler of the exercise.
type Processor interface {
	Process(ctx context.Context, e lab.Event, now time.Time) (lab.Outcome, error)
}

// Service is one implementation of the exercise: schema, DSN, handler and
// purge policy.
type Service struct {
	Name   string // the package, as the lab names variants: "exercises/retention"
	Schema string
	DSN    func(path string) string
	New    func(db *sql.DB) Processor
	Purge  func(ctx context.Context, db *sql.DB, now time.Time) (int64, error)
}

// Starting is this package, the exercise's starting point.
var Starting = Service{Name: "exercises/retention", Schema: Schema, DSN: DSN, New: func(db *sql.DB) Processor { return New(db) }, Purge: Purge}
