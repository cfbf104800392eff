package wal

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "equivalent/wal",
	Mistake: "",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return correct.New(db) },
}
