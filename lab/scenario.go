package lab

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
	// Run tells the story. It reports broken guarantees with r.Errorf; the
	// harness checks the invariants afterwards (Run.Close).
	Run func(r *Run)
}
