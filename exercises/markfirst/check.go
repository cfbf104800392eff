package markfirst

import "idemlab/exercises"

// Check is the exercise's check: the whole matrix held to the correct
// standard, the failures between the mark and the credit first.
var Check = exercises.Handler([]string{"Rollback", "FaultSweep", "Crash"})
