package deadlockasduplicate

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/mariadb"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/deadlockasduplicate",
	Mistake: `a deadlock (1213) on the credit answered as "duplicate"`,
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return correct.New(db) },
	MariaDB: &lab.MariaDB{
		Schema: correct.MariaDBSchema,
		DSN:    mariadb.DSN,
		New:    func(db *sql.DB) lab.Processor { return mariadb.Retry(NewMariaDB(db)) },
	},
}
