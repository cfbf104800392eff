package scenarios_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

var (
	update     = flag.Bool("update", false, "rewrite testdata/matrix.golden and the README's matrix from this run")
	strict     = flag.Bool("lab.strict", false, "hold naive variants to the correct standard: their failures fail the test, with transcript")
	reportPath = flag.String(report.ReportFlag, "", "write the verdicts, evidence and transcripts of this run as JSON to `file`: "+
		"one report per backend run (SQLite, and PostgreSQL at each level TestPostgres ran)")
	cellsDir = flag.String(report.CellsFlag, "", "also write each cell to `dir` the moment it finishes, one JSON file a cell, "+
		"named by its test (report.ReadFinished): go run ./cmd/lab web fills its matrix from them")
)

// reports holds the report of every matrix this run filled in, for
// -lab.report: TestScenarios's, and one per level of TestPostgres.
var (
	reportsMu sync.Mutex
	reports   []*report.Report
)

// keepReport adds rep to what -lab.report writes.
func keepReport(rep *report.Report) {
	reportsMu.Lock()
	defer reportsMu.Unlock()
	reports = append(reports, rep)
}

// writeReports writes every kept report to -lab.report, the SQLite matrix
// first, then the servers' levels in the order they ran.
func writeReports() error {
	reportsMu.Lock()
	defer reportsMu.Unlock()
	slices.SortStableFunc(reports, func(a, b *report.Report) int {
		return boolInt(a.OnServer()) - boolInt(b.OnServer())
	})
	return report.WriteAll(*reportPath, reports)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// finished writes a cell that just finished to -lab.cells, if set.
func finished(t *testing.T, rep *report.Report, sc labtest.Scenario, v lab.Variant, cell *report.Cell) {
	if *cellsDir == "" {
		return
	}
	f := report.Finished{Backend: rep.Backend, Scenario: sc.Info(), Variant: v.Name, Mistake: v.Mistake, Cell: cell}
	if err := report.WriteFinished(*cellsDir, t.Name(), f); err != nil {
		t.Errorf("writing the cell to -lab.cells: %v", err)
	}
}

const goldenPath = "testdata/matrix.golden"

// TestMain gives rapid the settings of the matrix unless the command line
// chose others: a fixed seed, because the matrix must be the same on every
// run (-rapid.seed=N explores another); no fail files, which rapid would
// write into testdata/ for every naive variant it catches (the seed in the
// evidence reproduces a failure just as well); shrinking only when the
// story will be read, with no time limit then; and shorter stories.
func TestMain(m *testing.M) {
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["rapid.seed"] {
		flag.Set("rapid.seed", "1")
	}
	if !set["rapid.nofailfile"] && !set["rapid.failfile"] {
		flag.Set("rapid.nofailfile", "true")
	}
	// Shrinking a counterexample gives the shortest story, for a reader:
	// with -lab.strict or -lab.report (explain, -evidence, the page) rapid
	// shrinks, and without them, where only the verdicts are compared, it
	// does not (scenarios.Shrinking says why). Scenarios run in synctest
	// bubbles, where rapid's clock is the fake one and a delivery that
	// waits out a busy timeout moves it by seconds: a time limit on
	// shrinking would cut it short after a few such stories, so when it
	// shrinks it has none; shrinking ends on its own anyway.
	if !set["rapid.shrinktime"] {
		shrink := "0s"
		if *strict || *reportPath != "" {
			shrink = "1000h"
		}
		flag.Set("rapid.shrinktime", shrink)
	}
	// Stories of 15 actions on average (rapid's default is 30): every naive
	// variant is still caught with every seed tried (TestPropertyCatches),
	// and shrinking, which replays stories thousands of times, takes half
	// as long. -rapid.steps=30 restores rapid's default.
	if !set["rapid.steps"] {
		flag.Set("rapid.steps", "15")
	}
	code := m.Run()
	if *reportPath != "" {
		if err := writeReports(); err != nil {
			fmt.Fprintf(os.Stderr, "writing the report: %v\n", err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// TestScenarios runs every scenario against every variant, as
// TestScenarios/<scenario>/<variant>: -run picks a cell
// ('TestScenarios/^Race$/naive/checkthenact'), a column ('TestScenarios/^Race$')
// or a row ('TestScenarios/.*/naive/checkthenact').
//
// A naive variant is expected to fail some scenarios: that is its lesson.
// The test fails when a verdict differs from the golden matrix — a scenario
// that stopped catching its mistake, or a variant that broke where it
// should hold — and whenever the correct variant fails anything. With
// -lab.strict every failure of every variant fails the test and prints its
// evidence.
func TestScenarios(t *testing.T) {
	golden, goldenErr := readGolden()
	rep := labtest.NewReport(scenarios.All, variants.All)
	rep.Backend = report.SQLite
	keepReport(rep)
	// go run ./cmd/lab reads the total from this line to show progress.
	t.Logf("%s%d", report.CellsMarker, len(scenarios.All)*len(variants.All))
	var mu sync.Mutex // guards rep: the cells of a column run in parallel
	for _, sc := range scenarios.All {
		t.Run(sc.Name, func(t *testing.T) {
			for _, v := range variants.All {
				t.Run(v.Name, func(t *testing.T) {
					// Every cell has its own databases and its own bubble:
					// running them side by side changes nothing in them.
					t.Parallel()
					cell := labtest.RunCell(t, sc, v)
					mu.Lock()
					rep.Set(v.Name, sc.Name, cell)
					mu.Unlock()
					finished(t, rep, sc, v, cell)
					judge(t, sc, v, cell, golden, goldenErr)
					if slices.Contains(pinnedTranscripts, sc.Name) {
						checkTranscript(t, sc, v, cell)
					}
				})
			}
		})
	}
	if *update {
		writeGolden(t, rep)
	}
}

// judge compares a verdict with the golden matrix and, for the correct
// variant or in strict mode, with the standard itself.
func judge(t *testing.T, sc labtest.Scenario, v lab.Variant, cell *report.Cell, golden map[string]map[string]string, goldenErr error) {
	if !cell.Pass && (*strict || v.Correct()) && sc.Limit == "" {
		t.Error(explainFailure(sc, v, cell, rerunCommand("", report.CellPattern("TestScenarios", sc.Name, v.Name))))
	}
	if cell.IsNeutral() && v.Correct() {
		// Every fault a scenario injects is addressed to a statement the
		// correct handler runs: one that misses it is the scenario's bug.
		t.Errorf("%s × %s could not judge the correct handler: %s", v.Name, sc.Name, cell.Neutral)
	}
	if *update {
		return
	}
	if goldenErr != nil {
		t.Fatalf("%v\nto create it: go test ./scenarios -update", goldenErr)
	}
	want, ok := golden[v.Name][sc.Name]
	// What the cell found, for go test -v (and for go test run in the
	// package's directory, which shows a passing test's log): a naive
	// variant caught as expected is a lesson, not a silent PASS.
	got := cell.Mark()
	switch {
	case got == report.Pass:
		t.Logf("%s %s × %s: %s", report.Pass, v.Name, sc.Name, cell.Detail)
	case got == report.Neutral:
		t.Logf("%s could not judge: %s × %s: %s", report.Neutral, v.Name, sc.Name, cell.Neutral)
	case ok && want == report.Fail && !*strict:
		t.Logf("%s as expected: %s × %s: %s\nsee it whole: %s", report.Fail, v.Name, sc.Name, cell.Detail, reproduce(sc, v))
	}
	switch {
	case !ok:
		t.Errorf("%s × %s: not in %s; accept this run's verdict with: go test ./scenarios -update", v.Name, sc.Name, goldenPath)
	case want == got:
	case got == report.Fail:
		t.Errorf("%s × %s = %s, want %s (golden matrix): it breaks a guarantee it held before:\n\t%s\nsee it whole with: %s\nif that is intended: go test ./scenarios -update",
			v.Name, sc.Name, got, want, cell.Detail, reproduce(sc, v))
	case got == report.Neutral:
		t.Errorf("%s × %s = %s, want %s (golden matrix): the scenario can no longer judge it: %s\nif that is intended: go test ./scenarios -update",
			v.Name, sc.Name, got, want, cell.Neutral)
	case want == report.Fail:
		t.Errorf("%s × %s = %s, want %s (golden matrix): the scenario no longer catches the mistake %q (evidence: %s)\nif that is intended: go test ./scenarios -update",
			v.Name, sc.Name, got, want, v.Mistake, cell.Detail)
	default:
		t.Errorf("%s × %s = %s, want %s (golden matrix): the scenario judges it now, and it holds (evidence: %s)\nif that is intended: go test ./scenarios -update",
			v.Name, sc.Name, got, want, cell.Detail)
	}
}

// explainFailure is what a student sees in strict mode: the mistake, every
// broken guarantee, the transcript, and rerun, the command that runs this
// cell alone (one or more lines, see rerunCommand). go test indents a
// failure's lines by 4 spaces per level of subtest, 20 for a cell of
// TestPostgres, and the transcript is indented by 2 more: so every line is
// at most report.TranscriptWidth runes, and fits 100 columns there.
func explainFailure(sc labtest.Scenario, v lab.Variant, cell *report.Cell, rerun string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s breaks %s\n", v.Name, sc.Name)
	wrap := func(s string, hang int) {
		b.WriteString(report.WrapWidth("  "+s, 2+hang, report.TranscriptWidth)) // ends with a newline
	}
	wrap(sc.Shows, 0)
	if v.Mistake != "" {
		wrap("mistake: "+v.Mistake, 2)
	}
	for i, f := range cell.Failures {
		where := "invariant"
		if i < len(cell.Where) && cell.Where[i] != "" {
			where = cell.Where[i]
		}
		wrap(where+": "+f, 2)
	}
	fmt.Fprintf(&b, "transcript:\n%s", indent(cell.Text()))
	fmt.Fprintf(&b, "this cell alone:\n%s", indent(rerun))
	return strings.TrimSuffix(b.String(), "\n")
}

// reproduce is the command that runs exactly this cell in strict mode, on
// one line.
func reproduce(sc labtest.Scenario, v lab.Variant) string {
	return fmt.Sprintf("go test ./scenarios -run '%s' -lab.strict", report.CellPattern("TestScenarios", sc.Name, v.Name))
}

// rerunCommand is the command that runs the cell of test that pattern
// selects, in strict mode, prefixed by env (an environment setting, or
// ""), broken into lines that fit report.TranscriptWidth as a shell
// reads them: the -run pattern on a line of its own.
func rerunCommand(env, pattern string) string {
	return env + "go test ./scenarios -count=1 -lab.strict \\\n  -run '" + pattern + "'\n"
}

// indent indents every line of s by two spaces (not a tab, which a
// terminal widens to 8).
func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
	return b.String()
}

func readGolden() (map[string]map[string]string, error) {
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		return nil, err
	}
	return report.ParseMatrix(string(data), scenarioInfos())
}

// writeGolden stores this run's matrix as the golden file and in the README.
// It needs every cell: a partial run would write a partial truth.
func writeGolden(t *testing.T, rep *report.Report) {
	if !rep.Complete() {
		t.Fatalf("-update needs every cell; run it without -run")
	}
	matrix := rep.Matrix()
	if err := os.WriteFile(goldenPath, []byte(matrix), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := updateReadme(rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s and the generated blocks of %s, %s and %s", goldenPath, readmePath, readmeRuPath, postgresPath)
}

// TestTranscriptsRepeat runs the concurrent scenarios twice on variants that
// take the lock first, read first, or fail under contention, and requires
// byte-identical transcripts: the scheduler, not the Go runtime, decides
// every step, down to which waiting delivery gets the lock.
func TestTranscriptsRepeat(t *testing.T) {
	for _, name := range []string{"Race", "Concurrent", "LockTimeout"} {
		sc := scenarios.Named(scenarios.All, name)
		for _, v := range variants.All {
			if v.Name != "correct" && v.Name != "naive/checkthenact" && v.Name != "naive/deferred" {
				continue
			}
			t.Run(sc.Name+"/"+v.Name, func(t *testing.T) {
				first, second := labtest.RunCell(t, sc, v), labtest.RunCell(t, sc, v)
				if first.Text() != second.Text() {
					t.Errorf("%s × %s: two runs gave different transcripts:\n--- first\n%s--- second\n%s",
						v.Name, sc.Name, first.Text(), second.Text())
				}
			})
		}
	}
}

// scenarioInfos is what the report says of every column.
func scenarioInfos() []report.ScenarioInfo {
	var infos []report.ScenarioInfo
	for _, sc := range scenarios.All {
		infos = append(infos, sc.Info())
	}
	return infos
}

// pinnedTranscripts are the scenarios whose transcripts are golden files,
// testdata/transcripts/<scenario>/<variant>.txt: their runs are
// deterministic step by step, so a change that renders a statement, a
// result or a wait differently shows up as a diff to review.
var pinnedTranscripts = []string{"Race", "ConflictRace", "Rollback", "LockTimeout", "Duplicate", "PayloadConflict"}

// checkTranscript compares a cell's transcript with its golden file, or
// writes the file with -update.
func checkTranscript(t *testing.T, sc labtest.Scenario, v lab.Variant, cell *report.Cell) {
	path := filepath.Join("testdata", "transcripts", sc.Name, strings.ReplaceAll(v.Name, "/", "_")+".txt")
	text := cell.Text()
	if err := fits(text); err != nil {
		t.Errorf("%s × %s: the transcript has %v", v.Name, sc.Name, err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v\nto create it: go test ./scenarios -update", err)
	}
	if text != string(want) {
		t.Errorf("%s × %s: the transcript differs from\n%s:\n%s\nif that is intended: go test ./scenarios -update",
			v.Name, sc.Name, path, firstDifference(string(want), text))
	}
}

// firstDifference shows the first line where got departs from want.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  got  %q\n  want %q", i+1, gl, wl)
		}
	}
	return "(they differ only in line endings)"
}
