package checkthenacttx

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/checkthenacttx",
	Mistake: `SELECT "seen it?" first, then INSERT … DO NOTHING and UPDATE, in one transaction`,
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    PostgresDSN,
		New:    func(db *sql.DB) lab.Processor { return Retry(New(db)) },
	},
}
