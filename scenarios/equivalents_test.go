package scenarios_test

import (
	"database/sql"
	"testing"

	"idemlab/correct"

	"idemlab/equivalent/commitmismatch"
	"idemlab/equivalent/plainbegin"
	"idemlab/equivalent/poolping"
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
// only one is not equivalent there.
func TestEquivalentsPoolOfOne(t *testing.T) {
	for _, sc := range scenarios.All {
		if sc.Limit != "" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			for _, v := range append([]lab.Variant{correct.Variant}, equivalents...) {
				t.Run(v.Name, func(t *testing.T) {
					t.Parallel()
					v := poolOfOne(v)
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

// poolOfOne is v with its handler given a pool of one connection, as
// correct's doc tells a user to open it.
func poolOfOne(v lab.Variant) lab.Variant {
	newHandler := v.New
	v.New = func(db *sql.DB) lab.Processor {
		db.SetMaxOpenConns(1)
		return newHandler(db)
	}
	return v
}
