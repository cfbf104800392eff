package newvariant

import (
	"database/sql"

	"idemlab/lab"
)

// Variant is the naive variant.
var Variant = lab.Variant{
	Name:    "solutions/newvariant",
	Mistake: "event ids folded to lower case",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
