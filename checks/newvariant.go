package checks

import (
	"fmt"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// NewVariantWork is what the newvariant exercise asks for: a variant and
// the scenario that catches it.
type NewVariantWork struct {
	Variant  lab.Variant
	Scenario labtest.Scenario
}

// NewVariant is the check of the newvariant exercise. The scenario holds
// on correct/ (it asks for nothing the pattern does not give, "Fair"), and
// fails on the variant (it catches the mistake, "Catches"); and the mistake
// is new: every scenario of the matrix that is not a limit holds on the
// variant ("New"), so that only the scenario you wrote catches it.
func NewVariant(c *Checker, w NewVariantWork) {
	sc := w.Scenario
	if cell := labtest.RunCell(c.T, sc, correct.Variant); !cell.Pass {
		c.Fail(Failure{Guarantee: "Fair", Shows: "your scenario holds on correct/: it asks for nothing the pattern does not give",
			Lines: prefix(sc.Name+" fails on correct/: ", cell.Failures), Transcript: cell.Transcript})
	}
	if c.Done() {
		return
	}
	if cell := labtest.RunCell(c.T, sc, w.Variant); cell.Pass {
		c.Failf("Catches", "your scenario fails on your variant: it catches the mistake",
			"%s holds on %s: it does not catch the mistake %q (%s)", sc.Name, w.Variant.Name, w.Variant.Mistake, cell.Detail)
	}
	for _, m := range NonLimit() {
		if c.Done() {
			return
		}
		if cell := labtest.RunCell(c.T, m, w.Variant); !cell.Pass {
			c.Fail(Failure{Guarantee: "New", Shows: "no scenario of the matrix catches your mistake: it is one nobody has made here yet",
				Lines: prefix(fmt.Sprintf("the matrix's %s already catches it: ", m.Name), cell.Failures), Transcript: cell.Transcript})
			return
		}
	}
}

// prefix returns lines, each with p before it.
func prefix(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}
