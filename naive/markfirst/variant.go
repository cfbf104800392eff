package markfirst

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/markfirst",
	Mistake: "the inbox row committed in its own transaction, then the credit",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    PostgresDSN,
		New:    func(db *sql.DB) lab.Processor { return Retry(New(db)) },
	},
}
