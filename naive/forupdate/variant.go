package forupdate

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/forupdate",
	Mistake: `SELECT … FOR UPDATE to check for a row that does not exist yet`,
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    PostgresDSN,
		New:    func(db *sql.DB) lab.Processor { return Retry(New(db)) },
	},
}
