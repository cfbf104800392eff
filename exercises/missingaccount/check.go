package missingaccount

import "idemlab/exercises"

// Check is the exercise's check: the whole matrix held to the correct
// standard, UnknownAccount first.
var Check = exercises.Handler([]string{"UnknownAccount"})
