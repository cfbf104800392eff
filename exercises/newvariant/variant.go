package newvariant

import (
	"database/sql"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Variant is your naive variant.
var Variant = lab.Variant{
	Name:    "exercises/newvariant",
	Mistake: "(name your mistake here)",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}

// Scenario is the story that catches it. Use the lab as the scenarios in
// ../../scenarios do: r.Open, db.Deliver, r.WantOutcome, r.WantBalance…
var Scenario = labtest.Scenario{
	Name:  "Mine",
	Short: "Mine",
	Shows: "(what a passing run demonstrates)",
	Run: func(r *labtest.Run) {
		r.Open()
	},
}
