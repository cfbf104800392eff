package checkthenact

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/postgres"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/checkthenact",
	Mistake: `SELECT "seen it?", then UPDATE and INSERT as separate autocommit statements`,
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: correct.PostgresSchema,
		DSN:    postgres.DSN,
	},
}
