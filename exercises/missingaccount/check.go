package missingaccount

import "idemlab/exercises"

// Check is the exercise's check: the scenarios UnknownAccount, Duplicate, held to
// the correct standard.
var Check = exercises.Scenarios("UnknownAccount", "Duplicate")
