package insertorignore

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/insertorignore",
	Mistake: "INSERT OR IGNORE: swallows every constraint violation, not just the key conflict",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
