package checkthenact

import "idemlab/exercises"

// Check is the exercise's check: the whole matrix held to the correct
// standard, the races and faults first.
var Check = exercises.Handler([]string{"Race", "ConflictRace", "Concurrent", "FaultSweep"})
