package scenarios_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

const (
	readmePath   = "../README.md"
	readmeRuPath = "../README.ru.md"
	postgresPath = "../docs/postgres.md"
	enginesPath  = "../docs/engines.md"
)

// readmeBlock is a code block that the tests generate, between two marker
// lines, so that what a reader sees is what the tests produce. The README
// is the front door and holds the SQLite matrix and the race; the longer
// pages of docs/ hold the rest, and README.ru.md repeats the race.
type readmeBlock struct {
	name  string   // "matrix", "race"
	files []string // the documents it lives in, relative to this package
	// text returns the block's content from a report holding the cells it
	// needs.
	text func(rep *report.Report) (string, error)
}

var readmeBlocks = []readmeBlock{
	{"matrix", []string{readmePath}, func(*report.Report) (string, error) { return goldenTerminal() }},
	{"postgres", []string{postgresPath}, func(*report.Report) (string, error) { return postgresMatrices() }},
	{"engines", []string{enginesPath}, func(*report.Report) (string, error) { return enginesSideBySide() }},
	{"race", []string{readmePath, readmeRuPath}, func(rep *report.Report) (string, error) {
		c := rep.Cell("naive/checkthenact", "Race")
		if c == nil {
			return "", fmt.Errorf("the README's race needs the cell naive/checkthenact × Race")
		}
		return c.TranscriptInPlace(), nil
	}},
}

// goldenTerminal is the README's matrix: the golden report as go run
// ./cmd/lab prints it (report.Terminal: the heading written down the
// columns), not the golden file's own text, whose staggered heading is for
// ParseReport to read back. cmd/lab's TestReadmeIsTheCommand holds it to
// the command's renderer.
func goldenTerminal() (string, error) {
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		return "", err
	}
	rep, err := report.ParseReport(string(data))
	if err != nil {
		return "", fmt.Errorf("%s: %w", goldenPath, err)
	}
	return rep.Terminal(), nil
}

// postgresMatrices is the README's PostgreSQL block: the three levels'
// matrices as go run ./cmd/lab -backend=pg prints them (report.Matrices),
// read back from their golden files, which TestPostgres checks every run
// against — so the README needs no server to stay true, and says only
// what a run has shown.
func postgresMatrices() (string, error) {
	var reps []*report.Report
	for _, level := range lab.Isolations {
		path := fmt.Sprintf("testdata/postgres-%s.golden", levelSlug(level))
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		rep, err := report.ParseReport(string(data))
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		rep.Backend, rep.Recorded = report.PostgresBackend(string(level)), path
		reps = append(reps, rep)
	}
	return report.Matrices(reps), nil
}

// engineColumn is one matrix of docs/engines.md's side-by-side table: its
// heading and the golden file it is read from.
type engineColumn struct{ heading, golden string }

// engineColumns are the eight matrices, an engine's levels together.
var engineColumns = []engineColumn{
	{"SQLite", goldenPath},
	{"PG RC", "testdata/postgres-rc.golden"},
	{"PG RR", "testdata/postgres-rr.golden"},
	{"PG SER", "testdata/postgres-ser.golden"},
	{"MDB RC", "testdata/mariadb-rc.golden"},
	{"MDB RR", "testdata/mariadb-rr.golden"},
	{"MDB SI", "testdata/mariadb-rr-si.golden"},
	{"MDB SER", "testdata/mariadb-ser.golden"},
}

// enginesSideBySide is docs/engines.md's block: every variant of the
// three engines' golden matrices, a row each, and a column per matrix —
// ✓ when the variant holds every scenario of that matrix that is not a
// limit of the pattern (a column the correct handler breaks by design),
// ✗ when it breaks one, · when it has no row there — then, for each
// variant that breaks anywhere, the columns it breaks in each matrix,
// matrices that agree told together. It is read from the golden files,
// which the matrix tests check every run against, so the page needs no
// server to stay true.
func enginesSideBySide() (string, error) {
	type verdict struct {
		has    bool
		broken []string // the short names of the columns it breaks
	}
	var rows []string
	verdicts := map[string][]verdict{}
	for i, col := range engineColumns {
		data, err := os.ReadFile(col.golden)
		if err != nil {
			return "", err
		}
		rep, err := report.ParseReport(string(data))
		if err != nil {
			return "", fmt.Errorf("%s: %w", col.golden, err)
		}
		for _, v := range rep.Variants {
			if _, ok := verdicts[v.Name]; !ok {
				rows = append(rows, v.Name)
				verdicts[v.Name] = make([]verdict, len(engineColumns))
			}
			vd := verdict{has: true}
			for _, sc := range rep.Scenarios {
				if c := v.Results[sc.Name]; sc.Limit == "" && c != nil && !c.Pass {
					vd.broken = append(vd.broken, sc.Short)
				}
			}
			verdicts[v.Name][i] = vd
		}
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", width, "")
	for _, col := range engineColumns {
		fmt.Fprintf(&b, " %-7s", col.heading)
	}
	b.WriteString("\n")
	for _, r := range rows {
		line := fmt.Sprintf("%-*s", width, r)
		for _, vd := range verdicts[r] {
			mark := report.Pass
			switch {
			case !vd.has:
				mark = "·"
			case len(vd.broken) > 0:
				mark = report.Fail
			}
			line += fmt.Sprintf(" %-7s", mark)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	b.WriteString("\n✓ holds every column that is not a limit   ✗ breaks one   · no row in that matrix\n\n")
	for _, r := range rows {
		var parts []string
		vs := verdicts[r]
		for i := 0; i < len(vs); {
			j := i + 1
			for j < len(vs) && engineOf(j) == engineOf(i) && slices.Equal(vs[j].broken, vs[i].broken) && vs[j].has == vs[i].has {
				j++
			}
			if vs[i].has && len(vs[i].broken) > 0 {
				var names []string
				for _, col := range engineColumns[i:j] {
					names = append(names, col.heading)
				}
				parts = append(parts, strings.Join(names, ", ")+": "+strings.Join(vs[i].broken, " "))
			}
			i = j
		}
		if len(parts) > 0 {
			b.WriteString(report.Wrap(r+" breaks "+strings.Join(parts, "; "), 4))
		}
	}
	return b.String(), nil
}

// engineOf is the engine of engineColumns[i]: the first word of its
// heading.
func engineOf(i int) string {
	engine, _, _ := strings.Cut(engineColumns[i].heading, " ")
	return engine
}

// updateReadmeBlock rewrites one generated block, whose text needs no
// report (the PostgreSQL matrices, after TestPostgres -update), in every
// document it lives in.
func updateReadmeBlock(name string) error {
	for _, b := range readmeBlocks {
		if b.name != name {
			continue
		}
		text, err := b.text(nil)
		if err != nil {
			return err
		}
		return b.write(text)
	}
	return fmt.Errorf("no generated block %q", name)
}

// write puts text between the block's markers in each of its documents.
func (b readmeBlock) write(text string) error {
	for _, path := range b.files {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		doc, err := b.replace(path, string(data), text)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (b readmeBlock) begin() string {
	return "<!-- " + b.name + ": generated by go test ./scenarios -update; do not edit -->\n```\n"
}

func (b readmeBlock) end() string { return "```\n<!-- end of " + b.name + " -->" }

// replace puts text between the block's markers in doc, the text of the
// document at path.
func (b readmeBlock) replace(path, doc, text string) (string, error) {
	before, rest, ok := strings.Cut(doc, b.begin())
	if !ok {
		return "", fmt.Errorf("%s has no marker %q", path, strings.TrimSpace(b.begin()))
	}
	_, after, ok := strings.Cut(rest, b.end())
	if !ok {
		return "", fmt.Errorf("%s has no marker %q", path, b.end())
	}
	return before + b.begin() + text + b.end() + after, nil
}

// updateReadme rewrites every generated block, in every document, from rep.
func updateReadme(rep *report.Report) error {
	for _, b := range readmeBlocks {
		text, err := b.text(rep)
		if err != nil {
			return err
		}
		if err := b.write(text); err != nil {
			return err
		}
	}
	return nil
}

// TestReadme checks that the README shows the golden SQLite matrix as the
// command prints it (goldenTerminal) and the transcript that
// naive/checkthenact × Race produces today as explain prints it, failures
// in place with their file:line (report.Cell.TranscriptInPlace), that
// docs/postgres.md shows the golden PostgreSQL matrices, and that
// README.ru.md shows the same race: every generated block, in every
// document it lives in, from the same function -update writes it with.
func TestReadme(t *testing.T) {
	rep := labtest.NewReport(scenarios.All, variants.All)
	for _, v := range variants.All {
		if v.Name == "naive/checkthenact" {
			rep.Set(v.Name, "Race", labtest.RunCell(t, scenarios.Named(scenarios.All, "Race"), v))
		}
	}
	for _, b := range readmeBlocks {
		text, err := b.text(rep)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range b.files {
			doc, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := b.replace(path, string(doc), text)
			if err != nil {
				t.Fatal(err)
			}
			if want != string(doc) {
				t.Errorf("%s's %s block differs from what the tests produce; rewrite it with: go test ./scenarios -update", path, b.name)
			}
		}
	}
}
