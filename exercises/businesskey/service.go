package businesskey

import (
	"context"
	"database/sql"

	"idemlab/lab"
)

// Processor is what the exercise asks for.
type Processor interface {
	Process(ctx context.Context, p Payment) (lab.Outcome, error)
}

// Service is one implementation of the exercise: its schema, its DSN and
// its handler.
type Service struct {
	Name   string // the package, as the lab names variants: "exercises/businesskey"
	Schema string
	DSN    func(path string) string
	New    func(db *sql.DB) Processor
}

// Starting is this package, the exercise's starting point.
var Starting = Service{Name: "exercises/businesskey", Schema: Schema, DSN: DSN, New: func(db *sql.DB) Processor { return New(db) }}
