package insertorreplace

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/insertorreplace",
	Mistake: "INSERT OR REPLACE: a repeat deletes the stored event and credits again",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: PostgresSchema,
		DSN:    PostgresDSN,
		New:    func(db *sql.DB) lab.Processor { return Retry(NewPostgres(db)) },
	},
}
