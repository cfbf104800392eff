package serialasduplicate

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/postgres"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/serialasduplicate",
	Mistake: `a serialization failure (40001) answered as "duplicate"`,
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return correct.New(db) },
	Postgres: &lab.Postgres{
		Schema: correct.PostgresSchema,
		DSN:    postgres.DSN,
		New:    func(db *sql.DB) lab.Processor { return Retry(correct.New(db)) },
	},
}
