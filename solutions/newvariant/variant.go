package newvariant

import (
	"database/sql"

	"idemlab/exercises/newvariant"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Variant is the naive variant.
var Variant = lab.Variant{
	Name:    "solutions/newvariant",
	Mistake: "event ids folded to lower case",
	Schema:  Schema,
	DSN:     DSN,
	New:     func(db *sql.DB) lab.Processor { return New(db) },
}

// Scenario catches it: two events whose ids differ only in case.
var Scenario = labtest.Scenario{
	Name:  "CaseSensitiveIDs",
	Short: "Case",
	Shows: "evt-A and evt-a are two events: both apply",
	Run: func(r *labtest.Run) {
		db := r.Open()
		upper := lab.Event{Source: "provider-a", EventID: "evt-A", AccountID: 1, Amount: 500}
		lower := upper
		lower.EventID = "evt-a"
		r.WantOutcome(db.Deliver(upper), lab.Applied)
		r.WantOutcome(db.Deliver(lower), lab.Applied)
		r.WantBalance(db, 1, 1000)
	},
}

// Work is this solution, in the shape the exercise's check takes.
var Work = newvariant.Work{Variant: Variant, Scenario: Scenario}
