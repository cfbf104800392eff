package newvariant

import (
	"database/sql"

	"idemlab/lab"
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
var Scenario = lab.Scenario{
	Name:  "Mine",
	Short: "Mine",
	Shows: "(what a passing run demonstrates)",
	Run: func(r *lab.Run) {
		r.Open()
	},
}
