package checks

import "idemlab/lab/labtest"

// MyScenario is the story that catches the mistake of your variant
// (exercises/newvariant), the second half of the newvariant exercise. Use
// the lab as the scenarios in ../scenarios do: r.Open, db.Deliver,
// r.WantOutcome, r.WantBalance… Judge what the handler answers and what
// the database holds, never words (the transcript, the variant's name or
// mistake, the schema's text, an error's message): the check runs the
// story on handlers that do what correct/ does in other words, and wants
// a failure on your variant, for what it does, that the story reports
// itself.
var MyScenario = labtest.Scenario{
	Name:  "Mine",
	Short: "Mine",
	Shows: "(what a passing run demonstrates)",
	Run: func(r *labtest.Run) {
		r.Open()
	},
}
