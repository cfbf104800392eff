package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"idemlab/lab/report"
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
	got := goTestArgs("^"+matrixTest+"$", "/tmp/r.json")
	want := []string{"test", "./scenarios", "-run", "^TestScenarios$", "-count=1", "-lab.report=/tmp/r.json"}
	if !slices.Equal(got, want) {
		t.Errorf("goTestArgs(%q, %q) = %q, want %q", "^"+matrixTest+"$", "/tmp/r.json", got, want)
	}
}

func TestNormalizeVariant(t *testing.T) {
	good := map[string]string{
		"correct":               "correct",
		"./correct/":            "correct",
		"checkthenact":          "naive/checkthenact",
		"naive/checkthenact":    "naive/checkthenact",
		"./naive/checkthenact/": "naive/checkthenact",
	}
	for arg, want := range good {
		got, err := normalizeVariant(arg)
		if err != nil || got != want {
			t.Errorf("normalizeVariant(%q) = %q, %v, want %q, nil", arg, got, err, want)
		}
	}
	for _, arg := range []string{"", "naive", "naive/", "naive/a/b", "a/b", "..", "naive/..", "/abs"} {
		got, err := normalizeVariant(arg)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("normalizeVariant(%q) = %q, %v, want a usage error", arg, got, err)
		}
	}
}

// fakeModule lays out variant directories under a temporary root.
func fakeModule(t *testing.T, dirs map[string]bool) string {
	t.Helper()
	root := t.TempDir()
	for dir, withGo := range dirs {
		d := filepath.Join(root, filepath.FromSlash(dir))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		name := "README"
		if withGo {
			name = "variant.go"
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestResolveVariant(t *testing.T) {
	root := fakeModule(t, map[string]bool{
		"correct":            true,
		"naive/checkthenact": true,
		"naive/autocommit":   true,
		"naive/empty":        false,
	})
	if got, want := listVariants(root), []string{"correct", "naive/autocommit", "naive/checkthenact"}; !slices.Equal(got, want) {
		t.Errorf("listVariants(root) = %q, want %q", got, want)
	}
	for arg, want := range map[string]string{
		"correct":            "correct",
		"checkthenact":       "naive/checkthenact",
		"naive/checkthenact": "naive/checkthenact",
	} {
		if got, err := resolveVariant(root, arg); err != nil || got != want {
			t.Errorf("resolveVariant(root, %q) = %q, %v, want %q, nil", arg, got, err, want)
		}
	}
	for _, arg := range []string{"nosuch", "empty", "naive/empty"} {
		_, err := resolveVariant(root, arg)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "correct, naive/autocommit, naive/checkthenact") {
			t.Errorf("resolveVariant(root, %q) error = %v, want a usage error listing the variants", arg, err)
		}
	}
}

func TestNaiveVariantsNone(t *testing.T) {
	root := fakeModule(t, map[string]bool{"correct": true})
	if got := naiveVariants(root); !strings.Contains(got, "none") {
		t.Errorf("naiveVariants(root) = %q, want it to say there are none", got)
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
				"Duplicate": {Pass: true, Detail: "applied once", Transcript: "A: deliver\n"},
				"Race":      {Pass: true, Detail: "one applied, one duplicate", Transcript: "A: deliver\nB: deliver\n"},
			}},
			{Name: "naive/checkthenact", Mistake: "reads, then writes", Results: map[string]*report.Cell{
				"Duplicate": {Pass: false, Detail: "balance 1000, want 500", Failures: []string{"balance 1000, want 500"}, Transcript: "A: x\n"},
				"Race": {Pass: false, Detail: "two credits", Failures: []string{"two credits", "inbox has 1 row"},
					Transcript: "A: SELECT\nB: SELECT\n"},
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
		"[3] naive/unrun × Race: line one\n    line two\n"
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
	got := renderMatrix(rep)
	if !strings.HasPrefix(got, rep.Matrix()+"\n") {
		t.Errorf("renderMatrix(rep) does not start with rep.Matrix():\n%s", got)
	}
	if !strings.HasSuffix(got, hint) || !strings.Contains(hint, "explain VARIANT SCENARIO") || !strings.Contains(hint, "diff VARIANT") {
		t.Errorf("renderMatrix(rep) = %q, want it to end with the explain and diff hint", got)
	}
}

func TestJSONShape(t *testing.T) {
	data, err := renderJSON(testReport())
	if err != nil {
		t.Fatalf("renderJSON(testReport()) error = %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("renderJSON(testReport()) is not JSON: %v\n%s", err, data)
	}
	if keys := sortedKeys(got); !slices.Equal(keys, []string{"scenarios", "variants"}) {
		t.Errorf("top-level keys = %q, want [scenarios variants]", keys)
	}
	scenarios, _ := got["scenarios"].([]any)
	if len(scenarios) != 2 || scenarios[0] != "Duplicate" || scenarios[1] != "Race" {
		t.Errorf("scenarios = %v, want [Duplicate Race]", got["scenarios"])
	}
	variants, _ := got["variants"].([]any)
	if len(variants) != 3 {
		t.Fatalf("len(variants) = %d, want 3", len(variants))
	}
	correct := variants[0].(map[string]any)
	if keys := sortedKeys(correct); !slices.Equal(keys, []string{"name", "results"}) {
		t.Errorf("correct variant keys = %q, want [name results] (no mistake)", keys)
	}
	naive := variants[1].(map[string]any)
	if keys := sortedKeys(naive); !slices.Equal(keys, []string{"mistake", "name", "results"}) {
		t.Errorf("naive variant keys = %q, want [mistake name results]", keys)
	}
	if naive["name"] != "naive/checkthenact" {
		t.Errorf("variants[1].name = %v, want naive/checkthenact", naive["name"])
	}
	race := naive["results"].(map[string]any)["Race"].(map[string]any)
	if keys := sortedKeys(race); !slices.Equal(keys, []string{"detail", "pass"}) {
		t.Errorf("cell keys = %q, want [detail pass] (no failures, no transcript)", keys)
	}
	if race["pass"] != false || race["detail"] != "two credits" {
		t.Errorf("naive/checkthenact × Race = %v, want pass false, detail \"two credits\"", race)
	}
	unrun := variants[2].(map[string]any)["results"].(map[string]any)
	if keys := sortedKeys(unrun); !slices.Equal(keys, []string{"Race"}) {
		t.Errorf("naive/unrun results keys = %q, want [Race] (cells not run left out)", keys)
	}
	again, err := renderJSON(testReport())
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
		"failures:\n\ttwo credits\n\tinbox has 1 row\n" +
		"transcript:\nA: SELECT\nB: SELECT\n" +
		"the same run as a test: go test ./scenarios -run '^TestScenarios$/^Race$/^naive$/^checkthenact$' -count=1 -lab.strict\n"
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
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "variants_test.go") {
		t.Errorf("renderExplain(rep, naive/unregistered, Race) error = %v, want a usage error pointing at variants_test.go", err)
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
		{[]string{"-json", "explain", "correct", "Race"}, exitUsage, "", "-json applies only to the matrix"},
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
		{Schedule: "A1 A2 B1", Outcome: "A applied, B duplicate; balance 500"},
	}
	got, err := renderPermutations(rep, "naive/checkthenact")
	if err != nil {
		t.Fatalf("renderPermutations(rep, naive/checkthenact) error = %v", err)
	}
	want := "naive/checkthenact × Race: exactly one credit\n" +
		"  ✗ A1 B1 A2 B2  A applied, B error (other error); balance 1000  balance 1000, want 500\n" +
		"  ✓ A1 A2 B1     A applied, B duplicate; balance 500\n" +
		"naive/checkthenact: 1 of 2 interleavings break Race\n\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("renderPermutations(rep, naive/checkthenact) = %q, want it to start with %q", got, want)
	}
	if _, err := renderPermutations(rep, "correct"); err == nil {
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
