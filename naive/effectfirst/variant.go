package effectfirst

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/effectfirst",
	Mistake: "the credit committed first, then the inbox row in a statement of its own",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    PostgresDSN,
		New:    func(db *sql.DB) lab.Processor { return Retry(New(db)) },
	},
}
