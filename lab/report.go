package lab

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Report is what a run of the scenario tests found: one cell per variant and
// scenario. The tests write it (go test ./scenarios -lab.report=FILE) and
// the command renders it, so the matrix a student reads is the one the tests
// produced.
type Report struct {
	Scenarios []ScenarioInfo   `json:"scenarios"`
	Variants  []VariantResults `json:"variants"`
}

// ScenarioInfo describes a column.
type ScenarioInfo struct {
	Name   string `json:"name"`
	Short  string `json:"short"`
	Shows  string `json:"shows"`
	Claims string `json:"claims"`
	Limit  string `json:"limit,omitempty"`
}

// VariantResults is a row: one variant's verdicts.
type VariantResults struct {
	Name    string           `json:"name"`
	Mistake string           `json:"mistake,omitempty"`
	Results map[string]*Cell `json:"results"`
}

// Cell is one variant's verdict on one scenario.
type Cell struct {
	Pass bool `json:"pass"`
	// Detail is the one-line evidence: the first broken guarantee, or what
	// a passing run showed.
	Detail string `json:"detail"`
	// Failures lists every broken guarantee.
	Failures []string `json:"failures,omitempty"`
	// Transcript is the run's full transcript.
	Transcript string `json:"transcript,omitempty"`
	// Permutations lists every interleaving a scenario enumerated.
	Permutations []Permutation `json:"permutations,omitempty"`
}

// NewReport returns an empty report with the given columns and rows.
func NewReport(scenarios []Scenario, variants []Variant) *Report {
	rep := &Report{}
	for _, s := range scenarios {
		rep.Scenarios = append(rep.Scenarios, ScenarioInfo{s.Name, s.Short, s.Shows, s.Claims, s.Limit})
	}
	for _, v := range variants {
		rep.Variants = append(rep.Variants, VariantResults{Name: v.Name, Mistake: v.Mistake, Results: map[string]*Cell{}})
	}
	return rep
}

// Set records a verdict.
func (rep *Report) Set(variant, scenario string, c *Cell) {
	for i := range rep.Variants {
		if rep.Variants[i].Name == variant {
			rep.Variants[i].Results[scenario] = c
			return
		}
	}
}

// Cell returns the verdict of variant on scenario, or nil if it was not run.
func (rep *Report) Cell(variant, scenario string) *Cell {
	for _, v := range rep.Variants {
		if v.Name == variant {
			return v.Results[scenario]
		}
	}
	return nil
}

// Complete reports whether every cell has a verdict.
func (rep *Report) Complete() bool {
	for _, v := range rep.Variants {
		for _, s := range rep.Scenarios {
			if v.Results[s.Name] == nil {
				return false
			}
		}
	}
	return true
}

// Write stores the report as JSON.
func (rep *Report) Write(path string) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadReport loads a report written by Write.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	if err := json.Unmarshal(data, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// Marks used in the matrix.
const (
	Pass = "✓"
	Fail = "✗"
	None = "·" // not run
)

// Matrix renders the verdicts as a table, rows variants and columns
// scenarios, followed by a legend of both. It is the text of the golden file
// and of the README: it holds no evidence, only verdicts, so it changes only
// when a verdict does.
func (rep *Report) Matrix() string {
	var b strings.Builder
	nameWidth := len("variant")
	for _, v := range rep.Variants {
		nameWidth = max(nameWidth, len(v.Name))
	}
	colWidth := 1
	for _, s := range rep.Scenarios {
		colWidth = max(colWidth, len(s.Short))
	}
	var row strings.Builder
	endRow := func() {
		b.WriteString(strings.TrimRight(row.String(), " ") + "\n")
		row.Reset()
	}
	fmt.Fprintf(&row, "%-*s", nameWidth, "")
	for _, s := range rep.Scenarios {
		fmt.Fprintf(&row, "  %-*s", colWidth, s.Short)
	}
	endRow()
	for _, v := range rep.Variants {
		fmt.Fprintf(&row, "%-*s", nameWidth, v.Name)
		for _, s := range rep.Scenarios {
			mark := None
			if c := v.Results[s.Name]; c != nil {
				mark = Fail
				if c.Pass {
					mark = Pass
				}
			}
			fmt.Fprintf(&row, "  %-*s", colWidth, mark)
		}
		endRow()
	}
	fmt.Fprintf(&b, "\n%s holds the guarantee   %s breaks it   %s not run\n\n", Pass, Fail, None)
	for _, s := range rep.Scenarios {
		fmt.Fprintf(&b, "%-*s  %s: %s (%s)\n", colWidth, s.Short, s.Name, s.Shows, s.Claims)
		if s.Limit != "" {
			fmt.Fprintf(&b, "%-*s  * a limit of the pattern: correct fails it by design; %s lifts it\n", colWidth, "", s.Limit)
		}
	}
	b.WriteString("\n")
	for _, v := range rep.Variants {
		mistake := v.Mistake
		if mistake == "" {
			mistake = "the inbox row and the credit in one BEGIN IMMEDIATE transaction"
		}
		fmt.Fprintf(&b, "%-*s  %s\n", nameWidth, v.Name, mistake)
	}
	return b.String()
}

// ParseMatrix reads the verdicts back from a matrix rendered by Matrix:
// verdicts[variant][scenario] is true for a pass. Cells marked as not run are
// absent.
func ParseMatrix(text string, scenarios []Scenario) (map[string]map[string]bool, error) {
	lines := strings.Split(text, "\n")
	if len(lines) < 2 {
		return nil, fmt.Errorf("matrix has no rows")
	}
	header := strings.Fields(lines[0])
	var shorts []string
	for _, s := range scenarios {
		shorts = append(shorts, s.Short)
	}
	if !slices.Equal(header, shorts) {
		return nil, fmt.Errorf("matrix columns = %v, want %v", header, shorts)
	}
	verdicts := map[string]map[string]bool{}
	for _, line := range lines[1:] {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			break
		}
		if len(fields) != len(scenarios)+1 {
			return nil, fmt.Errorf("matrix row %q has %d cells, want %d", fields[0], len(fields)-1, len(scenarios))
		}
		row := map[string]bool{}
		for i, mark := range fields[1:] {
			switch mark {
			case Pass, Fail:
				row[scenarios[i].Name] = mark == Pass
			case None:
			default:
				return nil, fmt.Errorf("matrix row %q: unknown mark %q", fields[0], mark)
			}
		}
		verdicts[fields[0]] = row
	}
	return verdicts, nil
}

// MatrixPattern is the go test -run pattern of the whole matrix: the test
// whose subtests are TestScenarios/<scenario>/<variant>.
const MatrixPattern = "^TestScenarios$"

// CellPattern is the go test -run pattern that selects exactly one cell,
// TestScenarios/<scenario>/<variant>: every element anchored and quoted, the
// variant split at its slashes, since go test matches each slash-separated
// element of a subtest name on its own.
func CellPattern(scenario, variant string) string {
	parts := []string{MatrixPattern, "^" + regexp.QuoteMeta(scenario) + "$"}
	for _, p := range strings.Split(variant, "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	return strings.Join(parts, "/")
}

// RowPattern is the go test -run pattern that selects one variant's row:
// every scenario, that variant only.
func RowPattern(variant string) string {
	parts := []string{MatrixPattern, ".*"}
	for _, p := range strings.Split(variant, "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	return strings.Join(parts, "/")
}
