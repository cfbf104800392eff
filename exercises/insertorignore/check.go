package insertorignore

import "idemlab/exercises"

// Check is the exercise's check: the whole matrix held to the correct
// standard, DatabaseRefusal first.
var Check = exercises.Handler([]string{"DatabaseRefusal"})
