package newvariant

import (
	"fmt"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Work is what the exercise asks for: a variant and the scenario that
// catches it.
type Work struct {
	Variant  lab.Variant
	Scenario labtest.Scenario
}

// Check is the exercise's check: the scenario holds on correct/ (it asks
// for nothing the pattern does not give) and fails on the variant (it
// catches the mistake).
func Check(t *testing.T, w Work) []string {
	var failures []string
	if cell := labtest.RunCell(t, w.Scenario, correct.Variant); !cell.Pass {
		failures = append(failures, fmt.Sprintf("%s fails on correct/, so it asks for more than the pattern gives: %v", w.Scenario.Name, cell.Failures))
	}
	if cell := labtest.RunCell(t, w.Scenario, w.Variant); cell.Pass {
		failures = append(failures, fmt.Sprintf("%s holds on %s: it does not catch the mistake (%s)", w.Scenario.Name, w.Variant.Name, cell.Detail))
	}
	return failures
}
