package report

import (
	"fmt"
	"slices"
	"strings"
)

// recordedNeutral is the Neutral of a cell read back from a golden file
// (ParseReport), which keeps the mark but not the reason.
const recordedNeutral = "neutral in the recorded matrix, which keeps no reason: run the cell for it"

// ParseMatrix reads the verdicts back from a matrix rendered by Matrix:
// verdicts[variant][scenario] is the cell's mark, Pass, Fail or Neutral.
// Cells marked as not run are absent. The columns must be scenarios, in
// their order.
func ParseMatrix(text string, scenarios []ScenarioInfo) (map[string]map[string]string, error) {
	g, err := parseGrid(text)
	if err != nil {
		return nil, err
	}
	var shorts []string
	for _, s := range scenarios {
		shorts = append(shorts, s.Short)
	}
	if !slices.Equal(g.shorts, shorts) {
		return nil, fmt.Errorf("matrix columns = %v, want %v", g.shorts, shorts)
	}
	verdicts := map[string]map[string]string{}
	for _, r := range g.rows {
		row := map[string]string{}
		for i, mark := range r.marks {
			if mark != None {
				row[scenarios[i].Name] = mark
			}
		}
		verdicts[r.name] = row
	}
	return verdicts, nil
}

// grid is the table of a rendered matrix: its column headings, and each
// row's name and marks.
type grid struct {
	shorts []string
	rows   []gridRow
	rest   []string // the lines after the table: the legend
}

type gridRow struct {
	name  string
	marks []string
}

// parseGrid reads the table at the top of a matrix rendered by Matrix.
func parseGrid(text string) (*grid, error) {
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
	g := &grid{}
	for i := 0; len(headLines) > 0; i++ {
		l := headLines[i%len(headLines)]
		if i/len(headLines) >= len(l) {
			break
		}
		g.shorts = append(g.shorts, l[i/len(headLines)])
	}
	n := len(headLines)
	for ; n < len(lines); n++ {
		fields := strings.Fields(lines[n])
		if len(fields) == 0 {
			break
		}
		if len(fields) != len(g.shorts)+1 {
			return nil, fmt.Errorf("matrix row %q has %d cells, want %d", fields[0], len(fields)-1, len(g.shorts))
		}
		for _, mark := range fields[1:] {
			if mark != Pass && mark != Fail && mark != Neutral && mark != None {
				return nil, fmt.Errorf("matrix row %q: unknown mark %q", fields[0], mark)
			}
		}
		g.rows = append(g.rows, gridRow{name: fields[0], marks: fields[1:]})
	}
	if len(g.rows) == 0 {
		return nil, fmt.Errorf("matrix has no rows")
	}
	g.rest = lines[n:]
	return g, nil
}

// ParseReport reads a whole report back from a matrix rendered by Matrix —
// a golden file: the columns with their names, what they show, their claims
// and limits, from the legend; the rows with their mistakes; and the
// verdicts. Its cells hold a verdict and nothing else, and the report
// knows neither its Backend nor where it was Recorded: the caller, who
// knows which file it read, sets both. It lets a program show the recorded
// verdicts of a backend it cannot run, without linking the registry.
func ParseReport(text string) (*Report, error) {
	g, err := parseGrid(text)
	if err != nil {
		return nil, err
	}
	// The legend: the key to the marks, then one entry per column, then
	// one per row, each block ending with an empty line; an entry's
	// continuation lines are indented.
	var blocks [][]string
	var cur []string
	for _, line := range g.rest {
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				blocks = append(blocks, cur)
			}
			cur = nil
			continue
		}
		if strings.HasPrefix(line, " ") && len(cur) > 0 {
			cur[len(cur)-1] += " " + strings.TrimSpace(line)
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		blocks = append(blocks, cur)
	}
	if len(blocks) != 3 {
		return nil, fmt.Errorf("matrix legend has %d blocks, want 3: the marks, the columns, the rows", len(blocks))
	}
	cols, rows := blocks[1], blocks[2]
	if len(cols) != len(g.shorts) {
		return nil, fmt.Errorf("matrix legend explains %d columns, the table has %d", len(cols), len(g.shorts))
	}
	rep := &Report{}
	for i, entry := range cols {
		short, rest, _ := strings.Cut(entry, " ")
		if short != g.shorts[i] {
			return nil, fmt.Errorf("matrix legend entry %d is %q, want column %q", i+1, short, g.shorts[i])
		}
		rest = strings.TrimSpace(rest)
		info := ScenarioInfo{Short: short}
		if j := strings.Index(rest, " "+limitPrefix); j >= 0 {
			info.Limit = strings.TrimSuffix(rest[j+1+len(limitPrefix):], " lifts it")
			rest = rest[:j]
		}
		name, shows, ok := strings.Cut(rest, ": ")
		k := strings.LastIndex(shows, " (")
		if !ok || k < 0 || !strings.HasSuffix(shows, ")") {
			return nil, fmt.Errorf("matrix legend of %s = %q, want \"Name: what it shows (claims)\"", short, rest)
		}
		info.Name, info.Shows, info.Claims = name, shows[:k], shows[k+2:len(shows)-1]
		rep.Scenarios = append(rep.Scenarios, info)
	}
	if len(rows) != len(g.rows) {
		return nil, fmt.Errorf("matrix legend names %d rows, the table has %d", len(rows), len(g.rows))
	}
	for i, entry := range rows {
		name, mistake, _ := strings.Cut(entry, " ")
		if name != g.rows[i].name {
			return nil, fmt.Errorf("matrix legend row %d is %q, want %q", i+1, name, g.rows[i].name)
		}
		mistake = strings.TrimSpace(mistake)
		if name == "correct" || strings.HasPrefix(mistake, "no mistake: ") {
			mistake = ""
		}
		v := VariantResults{Name: name, Mistake: mistake, Results: map[string]*Cell{}}
		for j, mark := range g.rows[i].marks {
			switch mark {
			case Pass, Fail:
				v.Results[rep.Scenarios[j].Name] = &Cell{Pass: mark == Pass}
			case Neutral:
				v.Results[rep.Scenarios[j].Name] = &Cell{Pass: true, Neutral: recordedNeutral}
			}
		}
		rep.Variants = append(rep.Variants, v)
	}
	return rep, nil
}
