package deferred

import (
	"database/sql"

	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "naive/deferred",
	Mistake: "plain BEGIN and a read first: the lock upgrade fails at once with SQLITE_BUSY",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
