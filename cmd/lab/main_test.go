package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"idemlab/lab/report"
	"idemlab/workshop"
)

func TestCellPattern(t *testing.T) {
	tests := []struct {
		scenario, variant, want string
	}{
		{"Race", "naive/checkthenact", "^TestScenarios$/^Race$/^naive$/^checkthenact$"},
		{"Duplicate", "correct", "^TestScenarios$/^Duplicate$/^correct$"},
		{"A.b", "naive/x+y", `^TestScenarios$/^A\.b$/^naive$/^x\+y$`},
	}
	for _, tt := range tests {
		if got := report.CellPattern(matrixTest, tt.scenario, tt.variant); got != tt.want {
			t.Errorf("report.CellPattern(%q, %q) = %q, want %q", tt.scenario, tt.variant, got, tt.want)
		}
	}
}

// TestCellPatternMatches checks the pattern the way go test uses it: each
// slash-separated element against the same element of the test name.
func TestCellPatternMatches(t *testing.T) {
	pattern := report.CellPattern(matrixTest, "Race", "naive/checkthenact")
	elems := strings.Split(pattern, "/")
	matches := func(name string) bool {
		parts := strings.Split(name, "/")
		for i, p := range parts {
			if i < len(elems) && !regexp.MustCompile(elems[i]).MatchString(p) {
				return false
			}
		}
		return true
	}
	for name, want := range map[string]bool{
		"TestScenarios/Race/naive/checkthenact":  true,
		"TestScenarios/Race/correct":             false,
		"TestScenarios/RaceX/naive/checkthenact": false,
		"TestScenarios/Race/naive/checkthenact2": false,
	} {
		if got := matches(name); got != want {
			t.Errorf("pattern %q matches %q = %v, want %v", pattern, name, got, want)
		}
	}
}

func TestGoTestArgs(t *testing.T) {
	got := goTestArgs(matrixTests(backends[:1], "^"+matrixTest+"$"), "/tmp/r.json")
	want := []string{"test", "./scenarios", "-run", "^TestScenarios$", "-count=1", "-vet=off", "-lab.report=/tmp/r.json"}
	if !slices.Equal(got, want) {
		t.Errorf("goTestArgs(matrix, /tmp/r.json) = %q, want %q", got, want)
	}
	got = goTestArgs(exerciseTests("exercises/checkthenact"), "/tmp/r.json")
	want = []string{"test", "./checks", "-run", "^TestExercise$", "-count=1", "-vet=off", "-exercise=checkthenact", "-lab.report=/tmp/r.json"}
	if !slices.Equal(got, want) {
		t.Errorf("goTestArgs(exercise, /tmp/r.json) = %q, want %q", got, want)
	}
}

func TestResolveExercise(t *testing.T) {
	if got, err := resolveVariant("exercises/checkthenact"); err != nil || got != "exercises/checkthenact" {
		t.Errorf("resolveVariant(exercises/checkthenact) = %q, %v, want it resolved", got, err)
	}
	for _, arg := range []string{"exercises/nosuch", "exercises/", "exercises/../correct"} {
		if _, err := resolveVariant(arg); err == nil {
			t.Errorf("resolveVariant(%q) error = nil, want an unknown variant", arg)
		}
	}
}

func TestResolveVariant(t *testing.T) {
	for arg, want := range map[string]string{
		"correct":               "correct",
		"./correct/":            "correct",
		"checkthenact":          "naive/checkthenact",
		"naive/checkthenact":    "naive/checkthenact",
		"./naive/checkthenact/": "naive/checkthenact",
	} {
		if got, err := resolveVariant(arg); err != nil || got != want {
			t.Errorf("resolveVariant(%q) = %q, %v, want %q, nil", arg, got, err, want)
		}
	}
	// A name that fits none, or several, is one line that names the arg
	// and says which are close or which it could be, not every variant.
	for arg, says := range map[string]string{
		"":                    "no variant named",
		"naive":               `ambiguous variant "naive": naive/busyasduplicate, `,
		"naive/":              `ambiguous variant "naive/": naive/busyasduplicate, `,
		"naive/a/b":           `unknown variant "naive/a/b"`,
		"nosuch":              `unknown variant "nosuch", and no variant's name is close to it`,
		"..":                  `unknown variant ".."`,
		"/abs":                `unknown variant "/abs"`,
		"naive/checkthenact2": "did you mean naive/checkthenact or naive/checkthenacttx?",
	} {
		got, err := resolveVariant(arg)
		var le *report.LookupError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "\n") ||
			utf8.RuneCountInString("lab: "+err.Error()) > report.Width {
			t.Errorf("resolveVariant(%q) = %q, %v, want one line of at most %d columns saying %q", arg, got, err, report.Width, says)
		}
	}
}

// testReport is a hand-built report: two scenarios, a correct variant that
// holds both and a naive one that breaks the second, and one cell not run.
func testReport() *report.Report {
	return &report.Report{
		Scenarios: []report.ScenarioInfo{
			{Name: "Duplicate", Short: "Dup", Shows: "a repeat is a duplicate", Claims: "C1"},
			{Name: "Race", Short: "Race", Shows: "exactly one credit", Claims: "C3, C4"},
		},
		Variants: []report.VariantResults{
			{Name: "correct", Results: map[string]*report.Cell{
				"Duplicate": {Pass: true, Detail: "applied once", Lines: []report.Line{{Session: "A", Text: "deliver", Kind: report.KindNote}}},
				"Race": {Pass: true, Detail: "one applied, one duplicate", Lines: []report.Line{
					{Session: "A", Text: "deliver", Kind: report.KindNote}, {Session: "B", Text: "deliver", Kind: report.KindNote}}},
			}},
			{Name: "naive/checkthenact", Mistake: "reads, then writes", Results: map[string]*report.Cell{
				"Duplicate": {Pass: false, Detail: "balance 1000, want 500", Failures: []string{"balance 1000, want 500"},
					Lines: []report.Line{{Session: "A", Text: "x", Kind: report.KindNote}}},
				"Race": {Pass: false, Detail: "two credits", Failures: []string{"two credits", "inbox has 1 row"},
					Lines: []report.Line{{Session: "A", Text: "SELECT", Kind: report.KindNote}, {Session: "B", Text: "SELECT", Kind: report.KindNote}}},
			}},
			{Name: "naive/unrun", Mistake: "never run", Results: map[string]*report.Cell{
				"Race": {Pass: false, Detail: "line one\nline two"},
			}},
		},
	}
}

func TestFootnotes(t *testing.T) {
	got := footnotes(testReport())
	want := "Evidence\n" +
		"[1] naive/checkthenact × Duplicate: balance 1000, want 500\n" +
		"[2] naive/checkthenact × Race: two credits\n" +
		"[3] naive/unrun × Race: line one line two\n"
	if got != want {
		t.Errorf("footnotes(testReport()) = %q, want %q", got, want)
	}
}

func TestFootnotesAllPass(t *testing.T) {
	rep := testReport()
	rep.Variants = rep.Variants[:1]
	got := footnotes(rep)
	if want := "Evidence\nno ✗: every variant run holds every guarantee\n"; got != want {
		t.Errorf("footnotes(correct only) = %q, want %q", got, want)
	}
}

func TestRenderMatrixKeepsMatrix(t *testing.T) {
	rep := testReport()
	for _, evidence := range []bool{false, true} {
		got := renderMatrix(rep, evidence)
		if !strings.HasPrefix(got, rep.Terminal()+"\n") {
			t.Errorf("renderMatrix(rep, %v) does not start with rep.Terminal():\n%s", evidence, got)
		}
		if rows, golden := matrixRows(got), matrixRows(rep.Matrix()); !slices.Equal(rows, golden) {
			t.Errorf("renderMatrix(rep, %v) rows = %q, want the golden matrix's %q", evidence, rows, golden)
		}
		if !strings.HasSuffix(got, hint) {
			t.Errorf("renderMatrix(rep, %v) = %q, want it to end with the hint", evidence, got)
		}
		if has := strings.Contains(got, "[1] naive/checkthenact × Duplicate"); has != evidence {
			t.Errorf("renderMatrix(rep, %v) shows evidence = %v, want %v", evidence, has, evidence)
		}
	}
	for _, want := range []string{"-evidence", "row VARIANT", "column SCENARIO", "explain VARIANT SCENARIO", "diff VARIANT"} {
		if !strings.Contains(hint, want) {
			t.Errorf("hint = %q, want it to mention %q", hint, want)
		}
	}
}

// TestOutputFits checks every renderer against the width of a terminal.
func TestOutputFits(t *testing.T) {
	rep := testReport()
	long := strings.Repeat("a long piece of evidence ", 12)
	rep.Variants[1].Results["Race"].Detail = long
	rep.Variants[1].Results["Race"].Failures = []string{long}
	rep.Variants[1].Results["Race"].Permutations = []report.Permutation{{Schedule: "A1 B1", Outcome: long, Failures: []string{long}}}
	outputs := map[string]string{"matrix": renderMatrix(rep, true)}
	outputs["row"], _ = renderRow(rep, "naive/checkthenact")
	outputs["column"], _ = renderColumn(rep, "Race")
	outputs["permutations"], _ = renderPermutations(rep, "naive/checkthenact", false)
	for name, out := range outputs {
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > report.Width {
				t.Errorf("%s output has a line %d wide, want at most %d: %q", name, n, report.Width, line)
			}
		}
	}
}

// TestJSONCarriesTheReport checks that -json gives a program what it needs
// to render the kit: the scenarios' descriptions, the mistakes, and each
// cell's evidence and transcript.
func TestJSONCarriesTheReport(t *testing.T) {
	data, err := renderJSON([]*report.Report{testReport()})
	if err != nil {
		t.Fatalf("renderJSON([]*report.Report{testReport()}) error = %v", err)
	}
	var got report.Report
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("renderJSON([]*report.Report{testReport()}) is not a report: %v\n%s", err, data)
	}
	if s := got.Scenarios[1]; s.Name != "Race" || s.Short != "Race" || s.Shows == "" || s.Claims != "C3, C4" {
		t.Errorf("renderJSON: scenario 2 = %+v, want Race with its short name, what it shows and its claims", s)
	}
	if v := got.Variants[1]; v.Mistake != "reads, then writes" {
		t.Errorf("renderJSON: variant 2 mistake = %q, want %q", v.Mistake, "reads, then writes")
	}
	c := got.Cell("naive/checkthenact", "Race")
	if c == nil || c.Detail != "two credits" || !slices.Equal(c.Lines, testReport().Cell("naive/checkthenact", "Race").Lines) || len(c.Failures) != 2 {
		t.Errorf("renderJSON: naive/checkthenact × Race = %+v, want its detail, failures and transcript's lines", c)
	}
	again, err := renderJSON([]*report.Report{testReport()})
	if err != nil || !bytes.Equal(data, again) {
		t.Errorf("renderJSON is not deterministic:\n%s\n%s", data, again)
	}
}

func sortedKeys(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestRenderExplain(t *testing.T) {
	got, err := renderExplain(testReport(), "naive/checkthenact", "Race")
	if err != nil {
		t.Fatalf("renderExplain(rep, naive/checkthenact, Race) error = %v", err)
	}
	want := "naive/checkthenact × Race: FAIL\n" +
		"shows: exactly one credit (C3, C4)\n" +
		"mistake: reads, then writes\n" +
		"transcript:\nA: SELECT\nB: SELECT\n" +
		"broken too, in runs the transcript does not show:\n  two credits\n  inbox has 1 row\n" +
		"the same run as a test:\n  go test ./scenarios -count=1 -lab.strict \\\n    -run '^TestScenarios$/^Race$/^naive$/^checkthenact$'\n"
	if got != want {
		t.Errorf("renderExplain(rep, naive/checkthenact, Race) = %q, want %q", got, want)
	}

	got, err = renderExplain(testReport(), "correct", "Race")
	if err != nil || !strings.HasPrefix(got, "correct × Race: PASS\n") || strings.Contains(got, "mistake:") ||
		!strings.Contains(got, "detail: one applied, one duplicate\n") {
		t.Errorf("renderExplain(rep, correct, Race) = %q, %v, want a PASS with its detail and no mistake", got, err)
	}
}

func TestRenderExplainUnknown(t *testing.T) {
	_, err := renderExplain(testReport(), "correct", "Nope")
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "Duplicate, Race") {
		t.Errorf("renderExplain(rep, correct, Nope) error = %v, want a usage error listing Duplicate, Race", err)
	}
	_, err = renderExplain(testReport(), "naive/unregistered", "Race")
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "correct, naive/checkthenact") {
		t.Errorf("renderExplain(rep, naive/unregistered, Race) error = %v, want a usage error listing the variants", err)
	}
}

func TestTail(t *testing.T) {
	out := []byte("1\n2\n3\n4\n")
	if got, want := tail(out, 2), "3\n4\n"; got != want {
		t.Errorf("tail(%q, 2) = %q, want %q", out, got, want)
	}
	if got, want := tail(out, 10), "1\n2\n3\n4\n"; got != want {
		t.Errorf("tail(%q, 10) = %q, want %q", out, got, want)
	}
}

// TestUsage runs the command lines that never reach go test.
func TestUsage(t *testing.T) {
	tests := []struct {
		args   []string
		status int
		stdout string // a substring of stdout
		stderr string // a substring of stderr
	}{
		{[]string{"-h"}, exitOK, "explain VARIANT SCENARIO", ""},
		{[]string{"help"}, exitOK, "diff VARIANT", ""},
		{[]string{"frobnicate"}, exitUsage, "", `unknown subcommand "frobnicate"`},
		{[]string{"-nope"}, exitUsage, "", "-nope"},
		{[]string{"explain", "correct"}, exitUsage, "", "explain takes a variant and a scenario"},
		{[]string{"diff"}, exitUsage, "", "diff takes one variant"},
		{[]string{"-json", "explain", "correct", "Race"}, exitUsage, "", "apply only to the matrix"},
		{[]string{"-evidence", "row", "correct"}, exitUsage, "", "apply only to the matrix"},
		{[]string{"row"}, exitUsage, "", "row takes one variant"},
		{[]string{"column", "A", "B"}, exitUsage, "", "column takes one scenario"},
		{[]string{"explain", "nosuch", "Race"}, exitUsage, "", "unknown variant"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		status := run(tt.args, &stdout, &stderr)
		if status != tt.status || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d, stdout containing %q, stderr containing %q",
				tt.args, status, stdout.String(), stderr.String(), tt.status, tt.stdout, tt.stderr)
		}
	}
}

func TestRenderPermutations(t *testing.T) {
	rep := testReport()
	race := rep.Variants[1].Results["Race"]
	race.Permutations = []report.Permutation{
		{Schedule: "A1 B1 A2 B2", Outcome: "A applied, B error (other error); balance 1000", Failures: []string{"balance 1000, want 500"}},
		{Schedule: "A1 A2 B1", Outcome: "A applied, B duplicate; balance 500", Waited: []string{"B1"}},
		{Schedule: "B1 A1 B2", Outcome: "A applied, B error (other error); balance 1000", Failures: []string{"balance 1000, want 500"}},
	}
	got, err := renderPermutations(rep, "naive/checkthenact", false)
	if err != nil {
		t.Fatalf("renderPermutations(rep, naive/checkthenact) error = %v", err)
	}
	want := "naive/checkthenact × Race: exactly one credit\n" +
		"\n✗ A applied, B error (other error); balance 1000 — balance 1000, want 500 (2 interleavings)\n" +
		"    A1 B1 A2 B2\n    B1 A1 B2\n" +
		"\n✓ A applied, B duplicate; balance 500 (1 interleaving)\n" +
		"    waited for the lock: B1\n    A1 A2 B1\n" +
		"\nnaive/checkthenact: 2 of 3 interleavings break Race\n\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("renderPermutations(rep, naive/checkthenact) = %q, want it to start with %q", got, want)
	}
	if _, err := renderPermutations(rep, "correct", false); err == nil {
		t.Errorf("renderPermutations(rep, correct) error = nil, want one: no cell of correct enumerated interleavings")
	}
}

func TestFootnotesLimits(t *testing.T) {
	rep := testReport()
	rep.Scenarios = append(rep.Scenarios, report.ScenarioInfo{Name: "Retention", Short: "Ret*", Shows: "purged history", Limit: "exercise 8"})
	rep.Variants[0].Results["Retention"] = &report.Cell{Pass: false, Detail: "applied again"}
	rep.Variants[1].Results["Retention"] = &report.Cell{Pass: false, Detail: "applied again"}
	got := footnotes(rep)
	if !strings.Contains(got, "correct × Retention (a limit of the pattern): applied again\n") {
		t.Errorf("footnotes(rep) = %q, want correct's limit listed as such", got)
	}
	if strings.Contains(got, "naive/checkthenact × Retention") || !strings.Contains(got, "(1 ✗ of naive variants in * columns not listed") {
		t.Errorf("footnotes(rep) = %q, want the naive variant's limit counted, not listed", got)
	}
}

func TestFollowProgress(t *testing.T) {
	events := []string{
		`{"Action":"start","Package":"idemlab/scenarios"}`,
		`{"Action":"run","Test":"TestScenarios"}`,
		`{"Action":"output","Test":"TestScenarios","Output":"    scenarios_test.go:77: idemlab-cells: 4\n"}`,
		`{"Action":"pass","Test":"TestScenarios/Race/correct"}`,
		`{"Action":"fail","Test":"TestScenarios/Race/naive/x"}`,
		`{"Action":"pass","Test":"TestScenarios/Race"}`,
		`{"Action":"pass","Test":"TestScenarios/Dup/correct"}`,
		`not an event`,
	}
	var output, line bytes.Buffer
	followProgress(strings.NewReader(strings.Join(events, "\n")), &output, &line, true, 2, 1)
	if got := output.String(); !strings.Contains(got, "idemlab-cells: 4\n") || !strings.Contains(got, "not an event\n") {
		t.Errorf("followProgress output = %q, want the tests' output and the lines that are not events", got)
	}
	for _, want := range []string{"compiling", "3 of 4 cells done"} {
		if !strings.Contains(line.String(), want) {
			t.Errorf("followProgress progress line = %q, want it to show %q", line.String(), want)
		}
	}
	if !strings.HasSuffix(line.String(), "\r\033[K") {
		t.Errorf("followProgress progress line = %q, want it cleared at the end", line.String())
	}
	line.Reset()
	followProgress(strings.NewReader(strings.Join(events, "\n")), &output, &line, false, 2, 1)
	if strings.Contains(line.String(), "of 4") || !strings.Contains(line.String(), "3 cells done") {
		t.Errorf("followProgress(part of the matrix) progress line = %q, want a count without the matrix's total", line.String())
	}
}

func TestRenderBench(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkProcess/WAL-FULL/bare/deliverers=1-2         	     200	  15118648 ns/op	        100.0 events/s
BenchmarkProcess/WAL-FULL/distinct/deliverers=1-2     	     200	  30203928 ns/op	        80.00 events/s
BenchmarkProcess/WAL-FULL/repeat/deliverers=1-2       	     200	  30203928 ns/op	        250.0 events/s
PASS
`)
	rates, ds, ns := parseBench(out)
	if len(rates) != 3 || !slices.Equal(ds, []string{"WAL-FULL"}) || !slices.Equal(ns, []int{1}) {
		t.Fatalf("parseBench = %v, %v, %v, want 3 rates of WAL-FULL with 1 deliverer", rates, ds, ns)
	}
	got := renderBench(summarizeBench(rates, ds, ns))
	if !strings.Contains(got, "WAL-FULL             1           100              0.80              2.50\n") {
		t.Errorf("renderBench = %q, want the ratios 0.80 and 2.50 to the bare 100 events/s", got)
	}
	if strings.Contains(got, "retry/1k") {
		t.Errorf("renderBench(SQLite only) = %q, want no PostgreSQL columns", got)
	}
}

// TestRenderBenchRuns pairs each run's ratio with the bare rate of the
// same run and prints the median with the min–max; the JSON holds the same.
func TestRenderBenchRuns(t *testing.T) {
	var out strings.Builder
	for _, run := range [][2]float64{{100, 80}, {200, 180}, {50, 35}} {
		fmt.Fprintf(&out, "BenchmarkProcess/WAL-NORMAL/bare/deliverers=8-2 \t 200\t 1 ns/op\t %g events/s\n", run[0])
		fmt.Fprintf(&out, "BenchmarkProcess/WAL-NORMAL/distinct/deliverers=8-2 \t 200\t 1 ns/op\t %g events/s\n", run[1])
	}
	r := summarizeBench(parseBench([]byte(out.String())))
	if len(r.Rows) != 1 || r.Runs != 3 {
		t.Fatalf("summarizeBench = %+v, want one row of 3 runs", r)
	}
	want := report.Spread{Median: 0.8, Min: 0.7, Max: 0.9}
	if got := r.Rows[0].Ratios["distinct"]; math.Abs(got.Median-want.Median) > 1e-9 || math.Abs(got.Min-want.Min) > 1e-9 || math.Abs(got.Max-want.Max) > 1e-9 {
		t.Errorf("distinct ratio = %+v, want %+v (80/100, 180/200, 35/50: paired by run)", got, want)
	}
	if got := renderBench(r); !strings.Contains(got, "0.80 (0.70–0.90)") {
		t.Errorf("renderBench = %q, want 0.80 (0.70–0.90)", got)
	}
	j, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(j), `"distinct":{"median":0.8`) {
		t.Errorf("json = %s, %v, want the distinct ratio's median", j, err)
	}
	if svg, err := workshop.BenchSVG(&r); err != nil || !strings.HasPrefix(string(svg), "<svg") ||
		!strings.Contains(string(svg), `data-series="WAL-NORMAL" data-panel="ratio" data-deliverers="8" data-median="0.8"`) {
		t.Errorf("BenchSVG = %q, %v, want a chart with the row's point", svg, err)
	}
}

// TestRenderBenchPostgres reads BenchmarkPostgres's lines, whose metrics
// go test prints in alphabetical order, and shows the retries, busy
// answers and failures beside the ratios.
func TestRenderBenchPostgres(t *testing.T) {
	out := []byte(`BenchmarkPostgres/pg-ser/bare/deliverers=64-2         	    1000	   2307780 ns/op	        57.00 busy/1000	         0 errors/1000	       400.0 events/s	       770.0 retries/1000
BenchmarkPostgres/pg-ser/distinct/deliverers=64-2     	    1000	   2387718 ns/op	        51.00 busy/1000	         2.000 errors/1000	       300.0 events/s	       733.0 retries/1000
`)
	metrics, ds, ns := parseBench(out)
	if len(metrics) != 2 || !slices.Equal(ds, []string{"pg-ser"}) || !slices.Equal(ns, []int{64}) {
		t.Fatalf("parseBench = %v, %v, %v, want 2 measurements of pg-ser with 64 deliverers", metrics, ds, ns)
	}
	got := renderBench(summarizeBench(metrics, ds, ns))
	if !strings.Contains(got, "pg-ser              64           400              0.75                 -      733      51       2\n") {
		t.Errorf("renderBench = %q, want the ratio 0.75 and 733 retries, 51 busy, 2 failed per 1,000", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("renderBench line %q is %d columns, want at most 100", line, n)
		}
	}
}

// TestRunBenchProgress counts finished measurements on the progress line,
// and only those: go test's other lines (goos, PASS) are not measurements.
func TestRunBenchProgress(t *testing.T) {
	lines := "goos: linux\n" +
		"BenchmarkProcess/WAL-FULL/bare/deliverers=1-2 \t 200\t 15118648 ns/op\t 100.0 events/s\n" +
		"BenchmarkProcess/WAL-FULL/distinct/deliverers=1-2 \t 200\t 30203928 ns/op\t 80.00 events/s\n" +
		"PASS\n"
	var progress strings.Builder
	out, done, err := runBench(exec.Command("printf", "%s", lines), &progress, 0, 27)
	if err != nil {
		t.Fatalf("runBench(printf) = %v", err)
	}
	if done != 2 {
		t.Errorf("runBench(printf) counted %d, want 2", done)
	}
	if string(out) != lines {
		t.Errorf("runBench(printf) output = %q, want %q", out, lines)
	}
	if !strings.Contains(progress.String(), "2 of 27 measurements done") || strings.Contains(progress.String(), "3 of 27") {
		t.Errorf("runBench(printf) progress = %q, want it to count 2 of 27", progress.String())
	}
}

// renderMatrix is renderMatrices for SQLite's matrix alone, as go run
// ./cmd/lab prints it without -backend.
func renderMatrix(rep *report.Report, evidence bool) string {
	return renderMatrices([]*report.Report{rep}, evidence, "")
}
