package scenarios_test

import (
	"testing"

	"idemlab/equivalent/commitmismatch"
	"idemlab/equivalent/plainbegin"
	"idemlab/equivalent/poolping"
	"idemlab/equivalent/poolread"
	"idemlab/equivalent/readfirst"
	"idemlab/equivalent/untargeted"
	"idemlab/equivalent/wal"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
)

// equivalents are handlers that do what correct does, written another way
// (see each package's doc). They are a test of the engine, not of the
// handlers: a verdict against one of them is decided by the harness.
var equivalents = []lab.Variant{
	plainbegin.Variant,
	readfirst.Variant,
	poolread.Variant,
	untargeted.Variant,
	commitmismatch.Variant,
	poolping.Variant,
	wal.Variant,
}

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
			for _, v := range equivalents {
				t.Run(v.Name, func(t *testing.T) {
					t.Parallel()
					if cell := labtest.RunCell(t, sc, v); !cell.Pass {
						t.Error(explainFailure(sc, v, cell, rerunCommand("", report.CellPattern("TestEquivalents", sc.Name, v.Name))))
					}
				})
			}
		})
	}
}
