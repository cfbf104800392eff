package replay

import (
	"context"
	"database/sql"

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
	Name   string // the package, as the lab names variants: "exercises/replay"
	Schema string
	DSN    func(path string) string
	New    func(db *sql.DB) Processor
}

// Starting is this package, the exercise's starting point.
var Starting = Service{Name: "exercises/replay", Schema: Schema, DSN: DSN, New: func(db *sql.DB) Processor { return New(db) }}
