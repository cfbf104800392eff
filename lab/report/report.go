// Package report holds the verdicts of a run of the scenario tests — one
// cell per variant and scenario, with its evidence, transcript and
// interleavings — and renders them as the verdict matrix. The tests write a
// report as JSON and the command reads it, so what a student sees is what
// the tests found, and the command links neither the engine nor a
// database driver.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
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
	// Where holds, for each failure, the file:line of the scenario code
	// that reported it, or "" for one the harness found on its own (a
	// broken invariant).
	Where []string `json:"where,omitempty"`
	// Transcript is the run's full transcript.
	Transcript string `json:"transcript,omitempty"`
	// Permutations lists every interleaving a scenario enumerated.
	Permutations []Permutation `json:"permutations,omitempty"`
}

// Permutation is one interleaving of a scheduled run and what came of it.
type Permutation struct {
	// Schedule names the steps in the order they were released: "A1 B1 A2…",
	// where B2 is session B's second statement. A step released while
	// another session held the lock waits, and completes later on its own.
	Schedule string `json:"schedule"`
	// Outcome summarises the answers and the balances, e.g.
	// "A applied, B duplicate; balance 500".
	Outcome string `json:"outcome"`
	// Failures lists the broken guarantees; none when it held.
	Failures []string `json:"failures,omitempty"`
	// Waited lists the steps that had to wait for another session's lock,
	// e.g. "B1": the session's first statement waited.
	Waited []string `json:"waited,omitempty"`
	// Trace is the state at every decision and the transcript, recorded
	// only for a stepper (labtest.TraceCell).
	Trace *Trace `json:"trace,omitempty"`
}

// Held reports whether every guarantee held in this interleaving.
func (p Permutation) Held() bool { return len(p.Failures) == 0 }

// New returns an empty report with the given columns and rows.
func New(scenarios []ScenarioInfo, variants []VariantResults) *Report {
	rep := &Report{Scenarios: scenarios}
	for _, v := range variants {
		if v.Results == nil {
			v.Results = map[string]*Cell{}
		}
		rep.Variants = append(rep.Variants, v)
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

// Read loads a report written by Write.
func Read(path string) (*Report, error) {
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

// Width is the widest line the matrix and its legend take: it must fit a
// terminal and a projector.
const Width = 100

// Matrix renders the verdicts as a table, rows variants and columns
// scenarios, followed by a legend of both. It is the text of the golden file
// and of the README: it holds no evidence, only verdicts, so it changes only
// when a verdict does.
//
// Every column is two characters wide, so that the table fits Width with
// room for more scenarios; the column headings, up to five letters, are
// staggered over three lines, the first heading on the first line, the
// second on the second, the third on the third, the fourth on the first
// again, and so on:
//
//	                       Dup   Crash
//	                         Conf  Conc
//	                           Roll
//	correct                ✓ ✓ ✓ ✓ ✓
func (rep *Report) Matrix() string {
	var b strings.Builder
	nameWidth := len("variant")
	for _, v := range rep.Variants {
		nameWidth = max(nameWidth, len(v.Name))
	}
	// Columns are colWidth wide; a heading needs its letters and a space,
	// so the headings are staggered over as many lines as that takes.
	const colWidth = 2
	longest := 1
	for _, s := range rep.Scenarios {
		longest = max(longest, len(s.Short))
	}
	lines := (longest + colWidth) / colWidth
	for line := range lines {
		row := fmt.Sprintf("%-*s", nameWidth, "")
		for i, s := range rep.Scenarios {
			if i%lines != line {
				continue
			}
			col := nameWidth + 1 + colWidth*i
			row += strings.Repeat(" ", col-len(row)) + s.Short
		}
		b.WriteString(strings.TrimRight(row, " ") + "\n")
	}
	for _, v := range rep.Variants {
		row := fmt.Sprintf("%-*s", nameWidth, v.Name)
		for _, s := range rep.Scenarios {
			mark := None
			if c := v.Results[s.Name]; c != nil {
				mark = Fail
				if c.Pass {
					mark = Pass
				}
			}
			row += " " + mark
		}
		b.WriteString(row + "\n")
	}
	fmt.Fprintf(&b, "\n%s holds the guarantee   %s breaks it   %s not run\n\n", Pass, Fail, None)
	shortWidth := 0
	for _, s := range rep.Scenarios {
		shortWidth = max(shortWidth, len(s.Short))
	}
	for _, s := range rep.Scenarios {
		b.WriteString(Wrap(fmt.Sprintf("%-*s  %s: %s (%s)", shortWidth, s.Short, s.Name, s.Shows, s.Claims), shortWidth+2))
		if s.Limit != "" {
			b.WriteString(Wrap(fmt.Sprintf("%-*s  * a limit of the pattern: correct fails it by design; %s lifts it", shortWidth, "", s.Limit), shortWidth+2))
		}
	}
	b.WriteString("\n")
	for _, v := range rep.Variants {
		mistake := v.Mistake
		switch {
		case v.Name == "correct":
			mistake = "the inbox row and the credit in one BEGIN IMMEDIATE transaction"
		case mistake == "":
			mistake = "no mistake: correct written another way (go doc ./" + v.Name + ")"
		}
		b.WriteString(Wrap(fmt.Sprintf("%-*s  %s", nameWidth, v.Name, mistake), nameWidth+2))
	}
	return b.String()
}

// Wrap breaks s into lines of at most Width columns at spaces, indenting
// every line after the first by indent spaces, and ends it with a newline.
// Spaces within a line are kept as they are, so that columns stay aligned;
// a word longer than a line is left whole; s's own newlines become spaces.
func Wrap(s string, indent int) string {
	var b strings.Builder
	line, width := "", 0
	for _, tok := range wrapTokens.FindAllString(strings.ReplaceAll(s, "\n", " "), -1) {
		word := strings.TrimLeft(tok, " ")
		n := utf8.RuneCountInString(tok)
		if width > indent && width+n > Width && word != "" {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line, width = strings.Repeat(" ", indent)+word, indent+utf8.RuneCountInString(word)
			continue
		}
		line += tok
		width += n
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// wrapTokens are the words of a line, each with the spaces before it.
var wrapTokens = regexp.MustCompile(` *[^ ]+| +$`)

// ParseMatrix reads the verdicts back from a matrix rendered by Matrix:
// verdicts[variant][scenario] is true for a pass. Cells marked as not run are
// absent.
func ParseMatrix(text string, scenarios []ScenarioInfo) (map[string]map[string]bool, error) {
	lines := strings.Split(text, "\n")
	if len(lines) < 3 {
		return nil, fmt.Errorf("matrix has no rows")
	}
	// The heading lines are the ones before the first row, which starts
	// with a variant's name; read back in column order they interleave.
	var headLines [][]string
	for len(headLines) < len(lines) && strings.HasPrefix(lines[len(headLines)], " ") {
		headLines = append(headLines, strings.Fields(lines[len(headLines)]))
	}
	var header, shorts []string
	for i := 0; len(headLines) > 0; i++ {
		l := headLines[i%len(headLines)]
		if i/len(headLines) >= len(l) {
			break
		}
		header = append(header, l[i/len(headLines)])
	}
	for _, s := range scenarios {
		shorts = append(shorts, s.Short)
	}
	if !slices.Equal(header, shorts) {
		return nil, fmt.Errorf("matrix columns = %v, want %v", header, shorts)
	}
	verdicts := map[string]map[string]bool{}
	for _, line := range lines[len(headLines):] {
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

// CellPattern is the go test -run pattern that selects exactly one cell of
// the matrix test named test, test/<scenario>/<variant>: every element
// anchored and quoted, the variant split at its slashes, since go test
// matches each slash-separated element of a subtest name on its own. The
// test's name belongs to the test that defines it, so the caller passes it.
func CellPattern(test, scenario, variant string) string {
	return anchored(test) + "/" + anchored(scenario) + "/" + variantPattern(variant)
}

// RowPattern is the go test -run pattern that selects one variant's row of
// the matrix test named test: every scenario, that variant only.
func RowPattern(test, variant string) string {
	return anchored(test) + "/.*/" + variantPattern(variant)
}

// ColumnPattern is the go test -run pattern that selects one scenario's
// column of the matrix test named test.
func ColumnPattern(test, scenario string) string {
	return anchored(test) + "/" + anchored(scenario)
}

func anchored(name string) string { return "^" + regexp.QuoteMeta(name) + "$" }

func variantPattern(variant string) string {
	var parts []string
	for _, p := range strings.Split(variant, "/") {
		parts = append(parts, anchored(p))
	}
	return strings.Join(parts, "/")
}
