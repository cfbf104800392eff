package conflictnowrap

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "mutants/conflictnowrap",
	Mistake: "the payload-conflict error formatted with %v instead of %w",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
