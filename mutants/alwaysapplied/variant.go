package alwaysapplied

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "mutants/alwaysapplied",
	Mistake: "outcome = lab.Duplicate → outcome = lab.Applied: a repeat answered applied",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
