package markfirst

import "idemlab/exercises"

// Check is the exercise's check: the scenarios Rollback, FaultSweep, held to
// the correct standard.
var Check = exercises.Scenarios("Rollback", "FaultSweep")
