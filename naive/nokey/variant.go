package nokey

import (
	"database/sql"

	"idemlab/lab"
	"idemlab/naive/checkthenact"
	"idemlab/postgres"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/nokey",
	Mistake: "check-then-act, and the inbox has no primary key",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return checkthenact.New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    postgres.DSN,
	},
}
