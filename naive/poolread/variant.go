package poolread

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/poolread",
	Mistake: "a read on the pool while its own transaction holds a connection",
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
