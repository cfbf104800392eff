package newvariant

import (
	"database/sql"

	"idemlab/lab"
)

// Variant is the naive variant.
var Variant = lab.Variant{
	Name:    "solutions/newvariant",
	Mistake: "numeric event ids written one way: 007 and 7 are one event",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
