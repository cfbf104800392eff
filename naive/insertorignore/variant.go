package insertorignore

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/insertorignore",
	Mistake: "INSERT OR IGNORE: a NOT NULL or CHECK violation passes for a repeat",
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
