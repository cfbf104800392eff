package sourcescope

import "idemlab/exercises"

// Check is the exercise's check: the scenarios SourceScope, Duplicate, PayloadConflict, held to
// the correct standard.
var Check = exercises.Scenarios("SourceScope", "Duplicate", "PayloadConflict")
