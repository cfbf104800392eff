package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"idemlab/lab/report"
)

// hint is the last line of the matrix output: where to look next.
const hint = "transcript of a cell: go run ./cmd/lab explain VARIANT SCENARIO   code against correct: go run ./cmd/lab diff VARIANT\n"

// footnotes renders the evidence section: one numbered footnote per ✗
// cell, rows in the matrix's order and, within a row, columns in its order,
// so that [n] reads in the order the marks do.
func footnotes(rep *report.Report) string {
	var b strings.Builder
	b.WriteString("Evidence\n")
	n, limits := 0, 0
	for _, v := range rep.Variants {
		for _, s := range rep.Scenarios {
			c := v.Results[s.Name]
			if c == nil || c.Pass {
				continue
			}
			if s.Limit != "" && v.Mistake != "" {
				limits++ // every naive variant has the pattern's limits too
				continue
			}
			n++
			limit := ""
			if s.Limit != "" {
				limit = " (a limit of the pattern)"
			}
			fmt.Fprintf(&b, "[%d] %s × %s%s: %s\n", n, v.Name, s.Name, limit, oneLine(c.Detail))
		}
	}
	if n == 0 {
		fmt.Fprintf(&b, "no %s: every variant run holds every guarantee\n", report.Fail)
	}
	if limits > 0 {
		fmt.Fprintf(&b, "(%d %s of naive variants in * columns not listed: the limits of the pattern are theirs too)\n", limits, report.Fail)
	}
	return b.String()
}

// oneLine indents the continuation lines of a multi-line detail so that a
// footnote stays visibly one entry.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// renderMatrix is the whole output of go run ./cmd/lab: the matrix and its
// legend exactly as rep.Matrix renders them (the text of the golden file),
// the evidence footnotes, and the hint.
func renderMatrix(rep *report.Report) string {
	return rep.Matrix() + "\n" + footnotes(rep) + "\n" + hint
}

// jsonReport is the shape of go run ./cmd/lab -json: the verdicts and their
// one-line evidence, without failures or transcripts.
type jsonReport struct {
	Scenarios []string      `json:"scenarios"`
	Variants  []jsonVariant `json:"variants"`
}

// jsonVariant is a row of jsonReport.
type jsonVariant struct {
	Name    string              `json:"name"`
	Mistake string              `json:"mistake,omitempty"`
	Results map[string]jsonCell `json:"results"`
}

// jsonCell is a verdict of jsonReport.
type jsonCell struct {
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// toJSON returns the -json view of rep: scenario names in column order,
// variants in row order, and for each the cells that were run.
func toJSON(rep *report.Report) jsonReport {
	out := jsonReport{Scenarios: []string{}, Variants: []jsonVariant{}}
	for _, s := range rep.Scenarios {
		out.Scenarios = append(out.Scenarios, s.Name)
	}
	for _, v := range rep.Variants {
		jv := jsonVariant{Name: v.Name, Mistake: v.Mistake, Results: map[string]jsonCell{}}
		for _, s := range rep.Scenarios {
			if c := v.Results[s.Name]; c != nil {
				jv.Results[s.Name] = jsonCell{Pass: c.Pass, Detail: c.Detail}
			}
		}
		out.Variants = append(out.Variants, jv)
	}
	return out
}

// renderJSON is the output of go run ./cmd/lab -json: toJSON(rep), indented,
// with a final newline. Go sorts the keys of the results maps, so the text
// is deterministic.
func renderJSON(rep *report.Report) ([]byte, error) {
	data, err := json.MarshalIndent(toJSON(rep), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// findScenario returns the column of rep named name.
func findScenario(rep *report.Report, name string) (report.ScenarioInfo, bool) {
	for _, s := range rep.Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return report.ScenarioInfo{}, false
}

// findVariant returns the row of rep named name.
func findVariant(rep *report.Report, name string) (report.VariantResults, bool) {
	for _, v := range rep.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return report.VariantResults{}, false
}

// scenarioNames lists the columns of rep, for error messages.
func scenarioNames(rep *report.Report) string {
	var names []string
	for _, s := range rep.Scenarios {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// variantNames lists the rows of rep, for error messages.
func variantNames(rep *report.Report) string {
	var names []string
	for _, v := range rep.Variants {
		names = append(names, v.Name)
	}
	return strings.Join(names, ", ")
}

// renderExplain is the output of explain: the verdict of variant on
// scenario, what the scenario shows, the variant's mistake, the broken
// guarantees (or, for a pass, what the run showed) and the transcript. An
// unknown scenario, or a variant the tests do not run, is a usage error
// naming the valid ones.
func renderExplain(rep *report.Report, variant, scenario string) (string, error) {
	s, ok := findScenario(rep, scenario)
	if !ok {
		return "", badArgf("unknown scenario %q; scenarios are: %s", scenario, scenarioNames(rep))
	}
	v, ok := findVariant(rep, variant)
	if !ok {
		return "", badArgf("variant %s has a package but the scenario tests do not run it (add its Variant to scenarios/variants_test.go); they run: %s",
			variant, variantNames(rep))
	}
	c := v.Results[s.Name]
	if c == nil {
		return "", fmt.Errorf("the report has no verdict for %s × %s", variant, scenario)
	}
	var b strings.Builder
	verdict := "FAIL"
	if c.Pass {
		verdict = "PASS"
	}
	fmt.Fprintf(&b, "%s × %s: %s\n", v.Name, s.Name, verdict)
	fmt.Fprintf(&b, "shows: %s (%s)\n", s.Shows, s.Claims)
	if v.Mistake != "" {
		fmt.Fprintf(&b, "mistake: %s\n", v.Mistake)
	}
	if c.Pass {
		fmt.Fprintf(&b, "detail: %s\n", c.Detail)
	} else {
		failures := c.Failures
		if len(failures) == 0 {
			failures = []string{c.Detail}
		}
		b.WriteString("failures:\n")
		for _, f := range failures {
			fmt.Fprintf(&b, "\t%s\n", oneLine(f))
		}
	}
	b.WriteString("transcript:\n")
	switch {
	case c.Transcript == "":
		b.WriteString("(empty)\n")
	case strings.HasSuffix(c.Transcript, "\n"):
		b.WriteString(c.Transcript)
	default:
		b.WriteString(c.Transcript + "\n")
	}
	fmt.Fprintf(&b, "the same run as a test: go test ./scenarios -run '%s' -count=1 -lab.strict\n", report.CellPattern(matrixTest, s.Name, v.Name))
	return b.String(), nil
}

// renderPermutations lists, for every scenario of variant's row that
// enumerated interleavings, each interleaving with its outcome, and ends each
// scenario with a count such as
// "naive/checkthenact: 18 of 20 interleavings break Race".
func renderPermutations(rep *report.Report, variant string) (string, error) {
	v, ok := findVariant(rep, variant)
	if !ok {
		return "", badArgf("variant %q has no row in the matrix; variants are: %s", variant, variantNames(rep))
	}
	var b strings.Builder
	for _, s := range rep.Scenarios {
		c := v.Results[s.Name]
		if c == nil || len(c.Permutations) == 0 {
			continue
		}
		width := 0
		for _, p := range c.Permutations {
			width = max(width, len(p.Schedule))
		}
		fmt.Fprintf(&b, "%s × %s: %s\n", v.Name, s.Name, s.Shows)
		broken := 0
		for _, p := range c.Permutations {
			mark, why := report.Pass, ""
			if !p.Held() {
				mark, why = report.Fail, "  "+p.Failures[0]
				broken++
			}
			fmt.Fprintf(&b, "  %s %-*s  %s%s\n", mark, width, p.Schedule, p.Outcome, why)
		}
		fmt.Fprintf(&b, "%s: %d of %d interleavings break %s\n\n", v.Name, broken, len(c.Permutations), s.Name)
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("no scenario of %s enumerated interleavings", variant)
	}
	b.WriteString("a transcript of the shortest broken one: go run ./cmd/lab explain " + variant + " SCENARIO\n")
	return b.String(), nil
}
