package begin

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "mutants/begin",
	Mistake: "h.db.BeginTx(ctx, nil) → h.db.Begin(): the caller's context not passed to BEGIN",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
