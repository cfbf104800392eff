package checkthenact

import (
	"database/sql"

	"idemlab/lab"
	"idemlab/postgres"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "exercises/checkthenact",
	Mistake: "the exercise's starting point",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    postgres.DSN,
	},
}
