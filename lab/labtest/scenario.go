package labtest

import (
	"testing"
	"testing/synctest"

	"idemlab/lab"
	"idemlab/lab/report"
)

// Scenario is one column of the verdict matrix: a story told identically to
// every variant.
type Scenario struct {
	// Name is the scenario's test name: TestScenarios/<Name>/<variant>.
	Name string
	// Short is its column heading in the matrix, at most five letters.
	Short string
	// Shows is what a passing run demonstrates, in one line.
	Shows string
	// Claims are the article's claims it demonstrates (C1…C26 in DESIGN.md).
	Claims string
	// Limit, when set, marks a limit of the pattern: a guarantee that the
	// inbox alone cannot give, which the correct variant fails by design.
	// It names the exercise that lifts the limit. The matrix marks such a
	// column with a * and never holds a variant to it, even in strict mode.
	Limit string
	// Run tells the story. It reports broken guarantees with r.Errorf; the
	// harness checks the invariants afterwards (Run.Close).
	Run func(r *Run)
}

// RunCell runs scenario sc against variant v in a synctest bubble — where
// the scheduler can tell a session waiting for a lock from one that is
// parked, and where lock timeouts take no real time — and returns the
// verdict with its evidence. Failures of v are in the cell, not on t; t
// fails only if the lab itself cannot work.
func RunCell(t *testing.T, sc Scenario, v lab.Variant) *report.Cell {
	var cell *report.Cell
	synctest.Test(t, func(t *testing.T) {
		r := NewRun(t, v)
		sc.Run(r)
		r.Close()
		cell = &report.Cell{
			Pass:         !r.Failed(),
			Detail:       r.Detail(),
			Failures:     r.Failures(),
			Where:        r.Where(),
			Transcript:   r.Transcript.String(),
			Permutations: r.Permutations,
		}
	})
	return cell
}

// NewReport returns an empty report whose columns are scenarios and whose
// rows are variants.
func NewReport(scenarios []Scenario, variants []lab.Variant) *report.Report {
	var cols []report.ScenarioInfo
	for _, s := range scenarios {
		cols = append(cols, s.Info())
	}
	var rows []report.VariantResults
	for _, v := range variants {
		rows = append(rows, report.VariantResults{Name: v.Name, Mistake: v.Mistake})
	}
	return report.New(cols, rows)
}

// Info is what the report says of s.
func (s Scenario) Info() report.ScenarioInfo {
	return report.ScenarioInfo{Name: s.Name, Short: s.Short, Shows: s.Shows, Claims: s.Claims, Limit: s.Limit}
}
