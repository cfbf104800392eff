package checkthenacttx

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/mariadb"
	"idemlab/postgres"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/checkthenacttx",
	Mistake: `SELECT "seen it?" first, then INSERT … DO NOTHING and UPDATE, in one transaction`,
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
	Postgres: &lab.Postgres{
		Schema: correct.PostgresSchema,
		DSN:    postgres.DSN,
		New:    func(db *sql.DB) lab.Processor { return postgres.Retry(New(db)) },
	},
	MariaDB: &lab.MariaDB{
		Schema: correct.MariaDBSchema,
		DSN:    mariadb.DSN,
		New:    func(db *sql.DB) lab.Processor { return mariadb.Retry(NewMariaDB(db)) },
	},
}
