package timeoutswallow

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/mariadb"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/timeoutswallow",
	Mistake: "a lock wait timeout (1205) on the inbox INSERT logged, and the delivery committed",
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return correct.New(db) },
	MariaDB: &lab.MariaDB{
		Schema: correct.MariaDBSchema,
		DSN:    mariadb.DSN,
		New:    func(db *sql.DB) lab.Processor { return mariadb.Retry(NewMariaDB(db)) },
	},
}
