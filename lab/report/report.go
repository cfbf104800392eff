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
	"net/url"
	"os"
	"path/filepath"
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
	// Backend names the database the cells ran on and, on PostgreSQL, the
	// isolation level: SQLite, or PostgresBackend("read committed"). The
	// same variant can hold on one and break on another, so a verdict
	// means nothing without it. "" is SQLite, for reports written before
	// the field existed.
	Backend string `json:"backend,omitempty"`
	// Recorded is set on a report whose verdicts were not run but read
	// back from a golden file (ParseReport): it names that file. Such a
	// report has verdicts only — no evidence, no transcript — and whoever
	// shows it must say that it is a record, not a run.
	Recorded  string           `json:"recorded,omitempty"`
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
//
// A cell says one of three things. It holds (Pass, no Neutral): the
// scenario judged the handler and every guarantee held. It breaks (not
// Pass): a guarantee broke, and Failures say which. Or it is neutral
// (Neutral set): the scenario could not judge the handler, because
// something its story needed did not happen — a fault it injects never
// fired (the handler ran no "UPDATE of accounts": it credits by a
// trigger), an argument rewrite found no argument to rewrite (the handler
// binds the amount as another Go type). A neutral cell is no verdict
// against the handler, so Pass is true and Failures are empty; nor is it
// one for it, so it is never shown as a pass: Mark, and every renderer,
// give it a mark of its own. Code that asks only whether the handler
// broke something reads Pass; code that shows a verdict asks Mark.
type Cell struct {
	// Pass is false when the cell found a broken guarantee, true when it
	// found none: it held, or it was neutral.
	Pass bool `json:"pass"`
	// Neutral, when set, says why the cell could not judge the handler:
	// "the fault 'before the UPDATE of accounts' never fired: the handler
	// ran no such statement". A cell is neutral only when none of its
	// cases broke a guarantee and none could judge; a cell some of whose
	// cases could not judge and the rest held is a pass, and its Detail
	// says how many could not.
	Neutral string `json:"neutral,omitempty"`
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
	// Neutral, when set, says why this interleaving could not judge the
	// handler (a fault meant for it never fired): it neither held nor
	// broke, and has no Failures.
	Neutral string `json:"neutral,omitempty"`
	// Waited lists the steps that had to wait for another session's lock,
	// e.g. "B1": the session's first statement waited.
	Waited []string `json:"waited,omitempty"`
	// Trace is the state at every decision and the transcript, recorded
	// only for a stepper (labtest.TraceCell).
	Trace *Trace `json:"trace,omitempty"`
}

// Held reports whether no guarantee broke in this interleaving: it held,
// or it could not judge (Neutral).
func (p Permutation) Held() bool { return len(p.Failures) == 0 }

// Mark is the verdict of the interleaving as the kit shows it: Pass, Fail
// or Neutral.
func (p Permutation) Mark() string {
	switch {
	case !p.Held():
		return Fail
	case p.Neutral != "":
		return Neutral
	}
	return Pass
}

// Mark is the cell's verdict as the matrix shows it: Pass, Fail or
// Neutral.
func (c *Cell) Mark() string {
	switch {
	case !c.Pass:
		return Fail
	case c.Neutral != "":
		return Neutral
	}
	return Pass
}

// IsNeutral reports whether the cell could not judge the handler.
func (c *Cell) IsNeutral() bool { return c.Pass && c.Neutral != "" }

// SQLite is the Backend of the SQLite matrix.
const SQLite = "SQLite"

// PostgresBackend is the Backend of the PostgreSQL matrix at an isolation
// level spelled as PostgreSQL spells it ("read committed"): "PostgreSQL
// READ COMMITTED".
func PostgresBackend(level string) string { return "PostgreSQL " + strings.ToUpper(level) }

// OnPostgres reports whether the report's cells ran on PostgreSQL.
func (rep *Report) OnPostgres() bool { return strings.HasPrefix(rep.Backend, "PostgreSQL") }

// BackendName is Backend, with "" read as SQLite.
func (rep *Report) BackendName() string {
	if rep.Backend == "" {
		return SQLite
	}
	return rep.Backend
}

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

// WriteAll stores several reports in one file, as a JSON array: one go
// test run of ./scenarios can hold the SQLite matrix and a PostgreSQL
// matrix per isolation level, and -lab.report names one file.
func WriteAll(path string, reps []*Report) error {
	data, err := json.MarshalIndent(reps, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Read loads a file written by Write, or by WriteAll with one report in it.
func Read(path string) (*Report, error) {
	reps, err := ReadAll(path)
	if err != nil {
		return nil, err
	}
	if len(reps) != 1 {
		return nil, fmt.Errorf("%s holds %d reports, want 1 (read it with ReadAll)", path, len(reps))
	}
	return reps[0], nil
}

// ReadAll loads the reports of a file written by WriteAll, or the one
// report of a file written by Write.
func ReadAll(path string) ([]*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var reps []*Report
	if trimmed := strings.TrimSpace(string(data)); strings.HasPrefix(trimmed, "[") {
		err = json.Unmarshal(data, &reps)
	} else {
		rep := &Report{}
		err = json.Unmarshal(data, rep)
		reps = []*Report{rep}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reps, nil
}

// Backend returns the report of reps that ran on backend (see BackendName),
// or nil.
func Backend(reps []*Report, backend string) *Report {
	for _, rep := range reps {
		if rep.BackendName() == backend {
			return rep
		}
	}
	return nil
}

// Marks used in the matrix.
const (
	Pass    = "✓"
	Fail    = "✗"
	Neutral = "○" // could not judge the handler (see Cell)
	None    = "·" // not run
)

// RecordedNeutral is the Neutral of a cell read back from a golden file
// (ParseReport), which keeps the mark but not the reason.
const RecordedNeutral = "neutral in the recorded matrix, which keeps no reason: run the cell for it"

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
//
// A neutral cell (see Cell) is marked with Neutral, and the key to the
// marks names it only when the matrix has one, so that a matrix without
// one reads as it always has.
func (rep *Report) Matrix() string { return rep.matrix(rep.hasNeutral()) }

// hasNeutral reports whether a cell of rep is neutral.
func (rep *Report) hasNeutral() bool {
	for _, v := range rep.Variants {
		for _, c := range v.Results {
			if c != nil && c.IsNeutral() {
				return true
			}
		}
	}
	return false
}

// matrix is Matrix, with the neutral mark in the key when neutral is set.
func (rep *Report) matrix(neutral bool) string {
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
				mark = c.Mark()
			}
			row += " " + mark
		}
		b.WriteString(row + "\n")
	}
	if neutral {
		fmt.Fprintf(&b, "\n%s holds the guarantee   %s breaks it   %s could not judge it (explain says why)   %s not run\n\n",
			Pass, Fail, Neutral, None)
	} else {
		fmt.Fprintf(&b, "\n%s holds the guarantee   %s breaks it   %s not run\n\n", Pass, Fail, None)
	}
	shortWidth := 0
	for _, s := range rep.Scenarios {
		shortWidth = max(shortWidth, len(s.Short))
	}
	for _, s := range rep.Scenarios {
		b.WriteString(Wrap(fmt.Sprintf("%-*s  %s: %s (%s)", shortWidth, s.Short, s.Name, s.Shows, s.Claims), shortWidth+2))
		if s.Limit != "" {
			b.WriteString(Wrap(fmt.Sprintf("%-*s  %s%s lifts it", shortWidth, "", limitPrefix, s.Limit), shortWidth+2))
		}
	}
	b.WriteString("\n")
	for _, v := range rep.Variants {
		mistake := v.Mistake
		switch {
		case v.Name == "correct":
			mistake = rep.correctDoes()
		case mistake == "":
			mistake = "no mistake: correct written another way (go doc ./" + v.Name + ")"
		}
		b.WriteString(Wrap(fmt.Sprintf("%-*s  %s", nameWidth, v.Name, mistake), nameWidth+2))
	}
	return b.String()
}

// Matrices renders the matrices of several backends, each table under its
// backend's name. When their legends are the same, as PostgreSQL's three
// levels' are, the tables come first, to be read side by side, then the
// legend once; otherwise each table has its own. One matrix alone on SQLite
// is Matrix's text, untitled: the golden file's.
func Matrices(reps []*Report) string {
	if len(reps) == 1 && !reps[0].OnPostgres() {
		return reps[0].Matrix()
	}
	var b strings.Builder
	tables, legends := make([]string, len(reps)), make([]string, len(reps))
	shared, neutral := true, false
	for _, rep := range reps {
		neutral = neutral || rep.hasNeutral()
	}
	for i, rep := range reps {
		tables[i], legends[i], _ = strings.Cut(rep.matrix(neutral), "\n\n")
		shared = shared && legends[i] == legends[0]
	}
	for i, rep := range reps {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(Title(rep.BackendName()) + tables[i] + "\n")
		if !shared {
			b.WriteString("\n" + legends[i])
		}
	}
	if shared && len(reps) > 0 {
		b.WriteString("\n" + legends[0])
	}
	return b.String()
}

// Title is a backend's name as a heading over its part of an output,
// underlined.
func Title(name string) string {
	return name + "\n" + strings.Repeat("=", utf8.RuneCountInString(name)) + "\n"
}

// correctDoes is the correct variant's line in the legend: what it does
// right, on the report's backend.
func (rep *Report) correctDoes() string {
	if rep.OnPostgres() {
		return "the inbox row and the credit in one transaction, run again after a serialization " +
			"failure (40001) or a deadlock (40P01), a bounded number of times"
	}
	return "the inbox row and the credit in one BEGIN IMMEDIATE transaction"
}

// Wrap breaks s into lines of at most Width columns at spaces, indenting
// every line after the first by indent spaces, and ends it with a newline.
// Spaces within a line are kept as they are, so that columns stay aligned;
// a word longer than a line is left whole; s's own newlines become spaces.
func Wrap(s string, indent int) string { return WrapWidth(s, indent, Width) }

// WrapWidth is Wrap to width columns: for text that is indented when it is
// printed, such as a failure's message, which go test indents by 8.
func WrapWidth(s string, indent, width int) string {
	var b strings.Builder
	line, used := "", 0
	for _, tok := range wrapTokens.FindAllString(strings.ReplaceAll(s, "\n", " "), -1) {
		word := strings.TrimLeft(tok, " ")
		n := utf8.RuneCountInString(tok)
		if used > indent && used+n > width && word != "" {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line, used = strings.Repeat(" ", indent)+word, indent+utf8.RuneCountInString(word)
			continue
		}
		line += tok
		used += n
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// WidestLine returns the widest line of s and its width, in runes, the way
// a terminal counts columns for the kit's text ("✓" is three bytes and one
// column): tests hold every output the kit prints to Width with it.
func WidestLine(s string) (line string, width int) {
	for _, l := range strings.Split(s, "\n") {
		if n := utf8.RuneCountInString(l); n > width {
			line, width = l, n
		}
	}
	return line, width
}

// wrapTokens are the words of a line, each with the spaces before it.
var wrapTokens = regexp.MustCompile(` *[^ ]+| +$`)

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

// limitPrefix starts the legend line of a limit's column.
const limitPrefix = "* a limit of the pattern: correct fails it by design; "

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
				v.Results[rep.Scenarios[j].Name] = &Cell{Pass: true, Neutral: RecordedNeutral}
			}
		}
		rep.Variants = append(rep.Variants, v)
	}
	return rep, nil
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

// Pattern is the go test -run pattern that selects, under prefix (a
// pattern already, such as "^TestPostgres$/^(rc|rr)$"), the cells of
// scenario and variant; an empty scenario or variant stands for every one.
// CellPattern, RowPattern and ColumnPattern are Pattern under one test.
func Pattern(prefix, scenario, variant string) string {
	p := prefix + "/"
	if scenario == "" {
		p += ".*"
	} else {
		p += anchored(scenario)
	}
	if variant != "" {
		p += "/" + variantPattern(variant)
	}
	return p
}

func anchored(name string) string { return "^" + regexp.QuoteMeta(name) + "$" }

func variantPattern(variant string) string {
	var parts []string
	for _, p := range strings.Split(variant, "/") {
		parts = append(parts, anchored(p))
	}
	return strings.Join(parts, "/")
}

// Finished is one cell as a test writes it the moment the cell finishes
// (go test ./scenarios -lab.cells=DIR), before the run ends and writes the
// whole report: a page that shows the matrix filling in reads these, each
// once go test has said the cell passed or failed.
type Finished struct {
	Backend  string       `json:"backend"`
	Scenario ScenarioInfo `json:"scenario"`
	Variant  string       `json:"variant"`
	Mistake  string       `json:"mistake,omitempty"`
	Cell     *Cell        `json:"cell"`
}

// finishedPath is where the cell of the test named test is written in dir.
func finishedPath(dir, test string) string {
	return filepath.Join(dir, url.PathEscape(test)+".json")
}

// WriteFinished stores f as the cell of the test named test (t.Name()) in
// dir. It writes a temporary file and renames it, so that a reader never
// sees half a cell.
func WriteFinished(dir, test string, f Finished) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".cell-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), finishedPath(dir, test))
}

// ReadFinished loads the cell WriteFinished stored for the test named
// test; an error wrapping fs.ErrNotExist if there is none (a test that is
// not a cell).
func ReadFinished(dir, test string) (*Finished, error) {
	data, err := os.ReadFile(finishedPath(dir, test))
	if err != nil {
		return nil, err
	}
	f := &Finished{}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("the cell of %s: %w", test, err)
	}
	return f, nil
}

// Add records a finished cell, adding its column or row if the report has
// none yet (a report laid out from an older golden file).
func (rep *Report) Add(f *Finished) {
	if !slices.ContainsFunc(rep.Scenarios, func(s ScenarioInfo) bool { return s.Name == f.Scenario.Name }) {
		rep.Scenarios = append(rep.Scenarios, f.Scenario)
	}
	if !slices.ContainsFunc(rep.Variants, func(v VariantResults) bool { return v.Name == f.Variant }) {
		rep.Variants = append(rep.Variants, VariantResults{Name: f.Variant, Mistake: f.Mistake, Results: map[string]*Cell{}})
	}
	rep.Set(f.Variant, f.Scenario.Name, f.Cell)
}
