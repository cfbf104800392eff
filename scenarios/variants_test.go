package scenarios_test

import (
	"idemlab/correct"
	"idemlab/lab"
)

// variants are the rows of the matrix: the correct handler first, then every
// naive one. A new variant is added here (and gets a row on the next
// go test ./scenarios -update).
var variants = []lab.Variant{
	correct.Variant,
}
