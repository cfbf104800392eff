package newvariant

import (
	"database/sql"

	"idemlab/lab"
)

// Variant is your naive variant.
var Variant = lab.Variant{
	Name:    "exercises/newvariant",
	Mistake: "(name your mistake here)",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
