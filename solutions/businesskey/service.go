package businesskey

import (
	"database/sql"

	"idemlab/exercises/businesskey"
)

// Service is this solution, in the shape the exercise's check takes.
var Service = businesskey.Service{Name: "solutions/businesskey", Schema: Schema, DSN: DSN, New: func(db *sql.DB) businesskey.Processor { return New(db) }}
