package nofk

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/nofk",
	Mistake: "foreign_keys switched on once at setup, not on every connection",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return correct.New(db) },
}
