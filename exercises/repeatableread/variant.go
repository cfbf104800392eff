package repeatableread

import (
	"database/sql"

	"idemlab/lab"
	"idemlab/mariadb"
)

// Variant describes this package to the lab: on MariaDB only, with
// mariadb.DSN (which sets the level the check asks for, REPEATABLE READ)
// and the handler under mariadb.Retry.
var Variant = lab.Variant{
	Name:    "exercises/repeatableread",
	Mistake: "the exercise's starting point",
	MariaDB: &lab.MariaDB{
		Schema: Schema,
		DSN:    mariadb.DSN,
		New:    func(db *sql.DB) lab.Processor { return mariadb.Retry(New(db)) },
	},
}
