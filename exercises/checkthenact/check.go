package checkthenact

import "idemlab/exercises"

// Check is the exercise's check: the scenarios Race, Concurrent, FaultSweep, held to
// the correct standard.
var Check = exercises.Scenarios("Race", "Concurrent", "FaultSweep")
