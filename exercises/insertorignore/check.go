package insertorignore

import "idemlab/exercises"

// Check is the exercise's check: the scenarios DatabaseRefusal, Duplicate, PayloadConflict, held to
// the correct standard.
var Check = exercises.Scenarios("DatabaseRefusal", "Duplicate", "PayloadConflict")
