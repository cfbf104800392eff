package mutex

import (
	"database/sql"

	"idemlab/correct"
	"idemlab/lab"
)

// Variant describes this package to the lab.
var Variant = lab.Variant{
	Name:    "equivalent/mutex",
	Mistake: "",
	Schema:  correct.Schema,
	DSN:     correct.DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}
