package scenarios_test

import (
	"testing"

	"idemlab/correct"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// TestEquivalents runs every scenario, except the limits of the pattern,
// against every equivalent handler, as TestEquivalents/<scenario>/<handler>.
// Each must hold everywhere, on every run: a failure is the engine's.
//
//	go test ./scenarios -run TestEquivalents -count=20
func TestEquivalents(t *testing.T) {
	for _, sc := range scenarios.All {
		if sc.Limit != "" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			for _, v := range variants.Equivalents {
				t.Run(v.Name, func(t *testing.T) {
					t.Parallel()
					cell := labtest.RunCell(t, sc, v)
					if !cell.Pass {
						t.Error(explainFailure(sc, v, cell, rerunCommand("", report.CellPattern("TestEquivalents", sc.Name, v.Name))))
					}
					if cell.IsNeutral() {
						t.Errorf("%s × %s could not judge the handler: %s: every scenario must judge an equivalent, as it judges correct", v.Name, sc.Name, cell.Neutral)
					}
				})
			}
		})
	}
}

// TestEquivalentsPoolOfOne runs every scenario, except the limits of the
// pattern, against correct and every equivalent handler given a pool of one
// connection, the configuration correct's doc recommends, as
// TestEquivalentsPoolOfOne/<scenario>/<handler>. Each must hold everywhere:
// a handler that needs a second connection while its transaction holds the
// only one is not equivalent there. It runs in the full suite.
func TestEquivalentsPoolOfOne(t *testing.T) {
	if !labtest.FullSuite() {
		t.Skipf("the quick suite: %s=1 runs every equivalent on a pool of one", labtest.FullEnv)
	}
	for _, sc := range scenarios.All {
		if sc.Limit != "" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			for _, v := range append([]lab.Variant{correct.Variant}, variants.Equivalents...) {
				t.Run(v.Name, func(t *testing.T) {
					t.Parallel()
					v := variants.PoolOfOne(v)
					cell := labtest.RunCell(t, sc, v)
					if !cell.Pass {
						t.Error(explainFailure(sc, v, cell, rerunCommand("", report.CellPattern("TestEquivalentsPoolOfOne", sc.Name, v.Name))))
					}
					if cell.IsNeutral() {
						t.Errorf("%s × %s could not judge the handler: %s: every scenario must judge an equivalent, as it judges correct", v.Name, sc.Name, cell.Neutral)
					}
				})
			}
		})
	}
}
