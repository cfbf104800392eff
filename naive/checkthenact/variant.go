package checkthenact

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/checkthenact",
	Mistake: `SELECT "seen it?", then UPDATE and INSERT as separate autocommit statements`,
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    PostgresDSN,
	},
}
