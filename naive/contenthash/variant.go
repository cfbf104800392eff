package contenthash

import (
	"database/sql"

	"idemlab/lab"
	"idemlab/postgres"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/contenthash",
	Mistake: "deduplicates by a hash of account and amount instead of the event id",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    postgres.DSN,
		New:    func(db *sql.DB) lab.Processor { return postgres.Retry(New(db)) },
	},
}
