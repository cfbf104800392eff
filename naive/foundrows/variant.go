package foundrows

import (
	"database/sql"

	"github.com/go-sql-driver/mysql"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/mariadb"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/foundrows",
	Mistake: "clientFoundRows=true: ON DUPLICATE KEY UPDATE counts a repeat as a new row",
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return correct.New(db) },
	MariaDB: &lab.MariaDB{
		Schema: correct.MariaDBSchema,
		DSN:    DSN,
		New:    func(db *sql.DB) lab.Processor { return mariadb.Retry(correct.NewMariaDB(db)) },
	},
}

// DSN is mariadb.DSN with clientFoundRows=true.
func DSN(server string, level lab.Isolation) string {
	cfg, err := mysql.ParseDSN(mariadb.DSN(server, level))
	if err != nil {
		return server
	}
	cfg.ClientFoundRows = true
	return cfg.FormatDSN()
}
