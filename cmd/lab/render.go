package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"idemlab/lab/report"
)

// hint ends the SQLite matrix's output: where to look next, one request a
// line.
const hint = `evidence of every ✗:       go run ./cmd/lab -evidence
one variant, one scenario:  go run ./cmd/lab row VARIANT    go run ./cmd/lab column SCENARIO
a cell, step by step:       go run ./cmd/lab explain VARIANT SCENARIO
a mistake, as a diff:       go run ./cmd/lab diff VARIANT
`

// hintOn is the hint for the matrices -backend=flag ran: the same
// requests, on the same backend ("" is the default, SQLite).
func hintOn(flag string) string {
	if flag == "" {
		return hint
	}
	lab := "go run ./cmd/lab -backend=" + flag
	return "evidence of every ✗:  " + lab + " -evidence\n" +
		"one variant:          " + lab + " row VARIANT\n" +
		"one scenario:         " + lab + " column SCENARIO\n" +
		"a cell, step by step: " + lab + " explain VARIANT SCENARIO\n" +
		"a mistake, as a diff: go run ./cmd/lab diff VARIANT\n"
}

// backendFlag is the -backend value that selects bs again, "" for SQLite.
func backendFlag(bs []backend) string {
	switch {
	case !onServer(bs):
		return ""
	case len(bs) == len(on(bs[0].srv)):
		return bs[0].srv.flag
	default:
		return bs[0].flag
	}
}

// footnotes renders the evidence section: one numbered footnote per ✗
// cell, and per ○ cell (one that could not judge the handler, with why),
// rows in the matrix's order and, within a row, columns in its order, so
// that [n] reads in the order the marks do.
func footnotes(rep *report.Report) string {
	var b strings.Builder
	b.WriteString("Evidence\n")
	n, limits, neutral := 0, 0, 0
	for _, v := range rep.Variants {
		for _, s := range rep.Scenarios {
			c := v.Results[s.Name]
			if c == nil || c.Mark() == report.Pass {
				continue
			}
			if c.IsNeutral() {
				n++
				neutral++
				b.WriteString(report.Wrap(fmt.Sprintf("[%d] %s %s × %s could not judge it: %s", n, report.Neutral, v.Name, s.Name, c.Neutral), 4))
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
			b.WriteString(report.Wrap(fmt.Sprintf("[%d] %s × %s%s: %s", n, v.Name, s.Name, limit, c.Detail), 4))
		}
	}
	switch {
	case n == 0:
		fmt.Fprintf(&b, "no %s: every variant run holds every guarantee\n", report.Fail)
	case n == neutral:
		fmt.Fprintf(&b, "no %s: every cell that could judge its variant holds\n", report.Fail)
	}
	if limits > 0 {
		fmt.Fprintf(&b, "(%d %s of naive variants in * columns not listed: the limits of the pattern are theirs too)\n", limits, report.Fail)
	}
	return b.String()
}

// renderMatrices is the output of go run ./cmd/lab: the matrices of one or
// more backends and their legend as report.TerminalMatrices renders them
// (SQLite's alone is untitled; the golden file's rows and legend under a
// heading that needs no decoding), then, on request, the evidence of each,
// and the hint for the same backends.
func renderMatrices(reps []*report.Report, evidence bool, flag string) string {
	out := report.TerminalMatrices(reps) + "\n"
	if evidence {
		for _, rep := range reps {
			out += titled(rep, len(reps) > 1, footnotes(rep)) + "\n"
		}
	}
	return out + hintOn(flag)
}

// renderJSON is the output of go run ./cmd/lab -json: the report the tests
// wrote, as it is, so that a program can render the kit without reading Go:
// each scenario's short name, what it shows, its claims and whether it is a
// limit; each variant's mistake; each cell's verdict, evidence, failures
// with the line that found them, transcript (its lines: session, step,
// text, result and kind) and interleavings. Go sorts the keys of the
// results maps, so the text is deterministic.
//
// One backend gives one report, as an object; several (-backend=pg) give
// an array of them, each saying its backend.
func renderJSON(reps []*report.Report) ([]byte, error) {
	var v any = reps
	if len(reps) == 1 {
		v = reps[0]
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// renderRow is the output of row: every cell of one variant, its verdict
// and its evidence.
func renderRow(rep *report.Report, variant string) (string, error) {
	v, err := findVariant(rep, variant)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	mistake := v.Mistake
	if mistake == "" {
		mistake = "none: it is held to every guarantee"
	}
	b.WriteString(report.Wrap(fmt.Sprintf("%s — mistake: %s", v.Name, mistake), 4))
	var names []string
	var cells []*report.Cell
	for _, s := range rep.Scenarios {
		names, cells = append(names, s.Name+limitMark(s)), append(cells, v.Results[s.Name])
	}
	b.WriteString(cellLines(names, cells))
	b.WriteString("\na cell, step by step: " + labOn(rep) + " explain " + v.Name + " SCENARIO\n")
	return b.String(), nil
}

// renderColumn is the output of column: one scenario's verdict on every
// variant, with its evidence.
func renderColumn(rep *report.Report, scenario string) (string, error) {
	s, err := findScenario(rep, scenario)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(report.WrapClaims(fmt.Sprintf("%s: %s (%s)", s.Name, s.Shows, s.Claims), 4))
	if s.Limit != "" {
		b.WriteString(report.Wrap("a limit of the pattern: correct fails it by design; "+s.Limit+" lifts it", 4))
	}
	var names []string
	var cells []*report.Cell
	for _, v := range rep.Variants {
		names, cells = append(names, v.Name), append(cells, v.Results[s.Name])
	}
	b.WriteString(cellLines(names, cells))
	b.WriteString("\na cell, step by step: " + labOn(rep) + " explain VARIANT " + s.Name + "\n")
	return b.String(), nil
}

// cellLines lists cells, each under its name, as row and column print
// them: the mark, the name padded to the longest of names, the evidence.
// A nil cell (the run did not reach it) is left out.
func cellLines(names []string, cells []*report.Cell) string {
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	var b strings.Builder
	for i, c := range cells {
		if c != nil {
			b.WriteString(report.Wrap(fmt.Sprintf("%s %-*s  %s", c.Mark(), width, names[i], c.Detail), width+4))
		}
	}
	return b.String()
}

// limitMark is the * of a limit's column.
func limitMark(s report.ScenarioInfo) string {
	if s.Limit != "" {
		return "*"
	}
	return ""
}

// findVariant returns the row of rep that variant names
// (report.LookupVariant), or says why it has none: a variant of the
// registry that runs on another backend only has no row here.
func findVariant(rep *report.Report, variant string) (report.VariantResults, error) {
	v, err := rep.LookupVariant(variant)
	switch {
	case err != nil && slices.Contains(registered(), variant):
		return v, usagef("%s has no row on %s: it runs on another backend (-backend=pg)", variant, rep.BackendName())
	case err != nil:
		return v, usagef("%v", err)
	}
	return v, nil
}

// findScenario returns the column of rep that scenario names
// (report.LookupScenario).
func findScenario(rep *report.Report, scenario string) (report.ScenarioInfo, error) {
	s, err := rep.LookupScenario(scenario)
	if err != nil {
		return s, usagef("%v", err)
	}
	return s, nil
}

// renderExplain is the output of explain: the verdict of variant on
// scenario, what the scenario shows, the variant's mistake, the broken
// guarantees (or, for a pass, what the run showed) and the transcript. An
// unknown scenario, or a variant the tests do not run, is a usage error
// naming the valid ones.
func renderExplain(rep *report.Report, variant, scenario string) (string, error) {
	s, err := findScenario(rep, scenario)
	if err != nil {
		return "", err
	}
	v, err := findVariant(rep, variant)
	if err != nil {
		return "", err
	}
	c := v.Results[s.Name]
	if c == nil {
		return "", fmt.Errorf("the report has no verdict for %s × %s", variant, scenario)
	}
	var b strings.Builder
	verdict := map[string]string{report.Pass: "PASS", report.Fail: "FAIL", report.Neutral: "NEUTRAL (could not judge the handler)"}[c.Mark()]
	fmt.Fprintf(&b, "%s × %s: %s\n", v.Name, s.Name, verdict)
	shows := "shows: " + s.Shows
	if s.Claims != "" { // an exercise's own guarantee cites none
		shows += " (" + s.Claims + ")"
	}
	b.WriteString(report.WrapClaims(shows, 4))
	if v.Mistake != "" {
		b.WriteString(report.Wrap("mistake: "+v.Mistake, 4))
	}
	switch {
	case c.IsNeutral():
		b.WriteString(report.Wrap("why: "+c.Neutral, 4))
		b.WriteString(report.Wrap("so: no verdict, neither for the handler nor against it; the transcript shows what "+
			"the handler did instead", 4))
	case c.Pass:
		b.WriteString(report.Wrap("detail: "+c.Detail, 4))
	}
	b.WriteString("transcript:\n" + c.TranscriptInPlace())
	if name, ok := strings.CutPrefix(v.Name, "exercises/"); ok {
		fmt.Fprintf(&b, "the same check: go test ./checks -exercise=%s -exercise.show=%s\n", name, s.Name)
	} else {
		b.WriteString(reproduceCell(rep, s.Name, v.Name))
	}
	return b.String(), nil
}

// renderPermutations lists, for every scenario of variant's row that
// enumerated interleavings, the interleavings grouped by what came of them:
// each outcome once, with how many interleavings led to it, which steps
// waited for a lock, and the schedules, three of each or, with all, every
// one. It ends each scenario with a count
// such as "naive/checkthenact: 18 of 20 interleavings break Race".
func renderPermutations(rep *report.Report, variant string, all bool) (string, error) {
	v, err := findVariant(rep, variant)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, s := range rep.Scenarios {
		c := v.Results[s.Name]
		if c == nil || len(c.Permutations) == 0 {
			continue
		}
		b.WriteString(report.Wrap(fmt.Sprintf("%s × %s: %s", v.Name, s.Name, s.Shows), 4))
		type group struct {
			mark      string
			outcome   string
			failure   string // the first broken guarantee, or why it could not judge
			waited    string
			schedules []string
		}
		var groups []*group
		broken, neutral := 0, 0
		for _, p := range c.Permutations {
			g := &group{mark: p.Mark(), outcome: p.Outcome, waited: strings.Join(p.Waited, " ")}
			switch g.mark {
			case report.Fail:
				g.failure = p.Failures[0]
				broken++
			case report.Neutral:
				g.failure = "could not judge it: " + p.Neutral
				neutral++
			}
			i := slices.IndexFunc(groups, func(h *group) bool {
				return h.mark == g.mark && h.outcome == g.outcome && h.failure == g.failure && h.waited == g.waited
			})
			if i < 0 {
				groups = append(groups, g)
				i = len(groups) - 1
			}
			groups[i].schedules = append(groups[i].schedules, p.Schedule)
		}
		for _, g := range groups {
			line := fmt.Sprintf("%s %s", g.mark, g.outcome)
			if g.failure != "" {
				line = fmt.Sprintf("%s %s — %s", g.mark, g.outcome, g.failure)
			}
			b.WriteString("\n" + report.Wrap(fmt.Sprintf("%s (%s)", line, report.Count(len(g.schedules), "interleaving", "interleavings")), 4))
			if g.waited != "" {
				b.WriteString(report.Wrap("    waited for the lock: "+g.waited, 8))
			}
			shown := len(g.schedules)
			if !all {
				shown = min(shown, 3)
			}
			for _, sched := range g.schedules[:shown] {
				b.WriteString(report.Wrap("    "+sched, 8))
			}
			if more := len(g.schedules) - shown; more > 0 {
				fmt.Fprintf(&b, "    … and %s more (-all lists them)\n", report.Count(more, "interleaving", "interleavings"))
			}
		}
		unjudged := ""
		if neutral > 0 {
			unjudged = fmt.Sprintf("; %d could not judge it", neutral)
		}
		fmt.Fprintf(&b, "\n%s: %d of %d interleavings break %s%s\n\n", v.Name, broken, len(c.Permutations), s.Name, unjudged)
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("no scenario of %s enumerated interleavings", variant)
	}
	b.WriteString("the shortest broken one, step by step: " + labOn(rep) + " explain " + variant + " SCENARIO\n")
	return b.String(), nil
}
