package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"idemlab/lab/report"
)

func TestParseBackend(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  []string
	}{
		{"", []string{"sqlite"}},
		{"sqlite", []string{"sqlite"}},
		{"pg", []string{"pg-rc", "pg-rr", "pg-ser"}},
		{"PostgreSQL", []string{"pg-rc", "pg-rr", "pg-ser"}},
		{"pg-rr", []string{"pg-rr"}},
		{"pg-ser", []string{"pg-ser"}},
	} {
		bs, err := parseBackend(tt.value)
		var got []string
		for _, b := range bs {
			got = append(got, b.flag)
		}
		if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("parseBackend(%q) = %v, %v; want %v", tt.value, got, err, tt.want)
		}
	}
	for _, bad := range []string{"mysql", "pg-", "rc", "pg-rc,pg-rr"} {
		if _, err := parseBackend(bad); err == nil || !strings.Contains(err.Error(), "pg-ser") {
			t.Errorf("parseBackend(%q) error = %v, want one listing the values", bad, err)
		}
	}
}

// TestBackendsMatchGolden checks the table of backends against the files
// and the tests it names: each golden file exists and reads back whole.
func TestBackendsMatchGolden(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends {
		data, err := os.ReadFile(filepath.Join(root, b.golden))
		if err != nil {
			t.Errorf("backend %s: %v", b.flag, err)
			continue
		}
		if _, err := report.ParseReport(string(data)); err != nil {
			t.Errorf("backend %s: report.ParseReport(%s) error = %v", b.flag, b.golden, err)
		}
	}
}

// matchesRun reports whether go test -run pattern selects the test named
// name: each slash-separated element against the same element of the name.
func matchesRun(pattern, name string) bool {
	elems := strings.Split(pattern, "/")
	for i, p := range strings.Split(name, "/") {
		if i < len(elems) && !regexp.MustCompile(elems[i]).MatchString(p) {
			return false
		}
	}
	return true
}

func TestBackendPatterns(t *testing.T) {
	pg, _ := parseBackend("pg")
	rc, _ := parseBackend("pg-rc")
	sqlite, _ := parseBackend("sqlite")
	for _, tt := range []struct {
		bs                []backend
		scenario, variant string
		name              string
		want              bool
	}{
		{sqlite, "", "", "TestScenarios/Race/correct", true},
		{sqlite, "", "", "TestPostgres/rc/Race/correct", false},
		{pg, "", "", "TestPostgres/rr/Race/correct", true},
		{pg, "", "", "TestScenarios/Race/correct", false},
		{rc, "", "", "TestPostgres/rc/Race/correct", true},
		{rc, "", "", "TestPostgres/rr/Race/correct", false},
		{rc, "", "", "TestPostgres/rcx/Race/correct", false},
		{rc, "Race", "naive/forupdate", "TestPostgres/rc/Race/naive/forupdate", true},
		{rc, "Race", "naive/forupdate", "TestPostgres/rc/ConflictRace/naive/forupdate", false},
		{pg, "", "correct", "TestPostgres/ser/Duplicate/correct", true},
		{pg, "", "correct", "TestPostgres/ser/Duplicate/naive/checkthenact", false},
		{pg, "Race", "", "TestPostgres/ser/Race/naive/checkthenact", true},
		{pg, "Race", "", "TestPostgres/ser/AbortRace/correct", false},
	} {
		pattern := report.Pattern(prefix(tt.bs), tt.scenario, tt.variant)
		if got := matchesRun(pattern, tt.name); got != tt.want {
			t.Errorf("-run %q selects %s = %v, want %v", pattern, tt.name, got, tt.want)
		}
	}
	if got := matrixTests(pg, prefix(pg)); !got.whole || got.depth != 3 {
		t.Errorf("matrixTests(pg, the whole matrices) = whole %v, depth %d; want true, 3", got.whole, got.depth)
	}
	if got := matrixTests(rc, report.Pattern(prefix(rc), "Race", "")); got.whole {
		t.Errorf("matrixTests(pg-rc, a column) = whole, want a part")
	}
}

// TestNoServer: asking for PostgreSQL without IDEMLAB_PG gives one error
// that names the variable and an example, and runs no test.
func TestNoServer(t *testing.T) {
	t.Setenv(report.EnvPostgres, "")
	for _, args := range [][]string{
		{"-backend=pg"},
		{"-backend=pg-rc", "-evidence"},
		{"-backend=pg-ser", "-json"},
		{"-backend=pg", "row", "checkthenacttx"},
		{"-backend=pg-rr", "column", "Race"},
		{"-backend=pg", "explain", "correct", "Race"},
		{"-backend=pg", "permutations", "forupdate"},
	} {
		var stdout, stderr bytes.Buffer
		status := run(args, &stdout, &stderr)
		got := stderr.String()
		want := "  export IDEMLAB_PG='postgres:///postgres?host=/var/run/postgresql'\n  go run ./cmd/lab " + strings.Join(args, " ") + "\n"
		if status != exitFail || stdout.Len() != 0 || !strings.Contains(got, want) || strings.Contains(got, "running the tests") {
			t.Errorf("run(%q) without %s = %d, stdout %q, stderr %q; want %d, nothing on stdout, and stderr saying %q",
				args, report.EnvPostgres, status, stdout.String(), got, exitFail, want)
		}
		if n := strings.Count(got, "\n"); n > 5 {
			t.Errorf("run(%q) without %s wrote %d lines to stderr, want one error", args, report.EnvPostgres, n)
		}
		for _, line := range strings.Split(got, "\n") {
			if w := utf8.RuneCountInString(line); w > report.Width {
				t.Errorf("run(%q) without %s: a line %d wide, want at most %d: %q", args, report.EnvPostgres, w, report.Width, line)
			}
		}
	}
}

func TestBackendUsage(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"-backend=mysql"}, exitUsage, `unknown -backend "mysql"`},
		{[]string{"-backend=pg", "web"}, exitUsage, "-backend applies to"},
		{[]string{"-backend=pg", "diff", "forupdate"}, exitUsage, "-backend applies to"},
		{[]string{"-backend=pg", "step", "correct", "Race"}, exitUsage, "-backend applies to"},
	} {
		var stdout, stderr bytes.Buffer
		if status := run(tt.args, &stdout, &stderr); status != tt.status || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("run(%q) = %d, stderr %q; want %d, stderr containing %q", tt.args, status, stderr.String(), tt.status, tt.stderr)
		}
	}
}

// pgReports are testReport on PostgreSQL's three levels.
func pgReports() []*report.Report {
	var reps []*report.Report
	for _, b := range backends[1:] {
		rep := testReport()
		rep.Backend = b.name
		reps = append(reps, rep)
	}
	return reps
}

func TestRenderMatrices(t *testing.T) {
	reps := pgReports()
	got := renderMatrices(reps, true, "pg")
	for _, b := range backends[1:] {
		if !strings.Contains(got, b.name+"\n"+strings.Repeat("=", len(b.name))+"\n") {
			t.Errorf("renderMatrices(pg) does not title the matrix of %s:\n%s", b.name, got)
		}
	}
	if n := strings.Count(got, "✓ holds the guarantee"); n != 1 {
		t.Errorf("renderMatrices(pg) shows the legend %d times, want once (the levels share it)", n)
	}
	if !strings.Contains(got, "go run ./cmd/lab -backend=pg explain VARIANT SCENARIO") {
		t.Errorf("renderMatrices(pg) hint does not keep -backend=pg:\n%s", got)
	}
	if !strings.Contains(got, "40001") || strings.Contains(got, "BEGIN IMMEDIATE") {
		t.Errorf("renderMatrices(pg) says what correct does on SQLite, not on PostgreSQL:\n%s", got)
	}
	// Legends that differ are each shown with their table.
	reps[2].Variants[1].Mistake = "another mistake"
	if n := strings.Count(renderMatrices(reps, false, "pg"), "✓ holds the guarantee"); n != 3 {
		t.Errorf("renderMatrices(pg, legends differing) shows %d legends, want 3", n)
	}
	sqlite := testReport()
	if got, want := renderMatrices([]*report.Report{sqlite}, false, ""), renderMatrix(sqlite, false); got != want || strings.Contains(got, "SQLite\n") {
		t.Errorf("renderMatrices(SQLite alone) = %q, want renderMatrix's text, untitled: %q", got, want)
	}
}

// TestBackendOutputFits checks every new PostgreSQL output against the
// width of a terminal.
func TestBackendOutputFits(t *testing.T) {
	reps := pgReports()
	long := "naive/serialasduplicate"
	for _, rep := range reps {
		rep.Variants[1].Name = long
		rep.Scenarios[1].Name = "ConflictRace"
		rep.Variants[1].Results["ConflictRace"] = rep.Variants[1].Results["Race"]
	}
	outputs := map[string]string{"matrix": renderMatrices(reps, true, "pg")}
	for _, flag := range []string{"pg", "pg-rc", "pg-ser"} {
		outputs["hint "+flag] = hintOn(flag)
	}
	outputs["row"], _ = each(reps, func(rep *report.Report) (string, error) { return renderRow(rep, long) })
	outputs["column"], _ = each(reps, func(rep *report.Report) (string, error) { return renderColumn(rep, "ConflictRace") })
	outputs["explain"], _ = each(reps, func(rep *report.Report) (string, error) { return renderExplain(rep, long, "ConflictRace") })
	for name, out := range outputs {
		if out == "" {
			t.Errorf("%s output is empty", name)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > report.Width {
				t.Errorf("%s output has a line %d wide, want at most %d: %q", name, n, report.Width, line)
			}
		}
	}
	for _, name := range []string{"row", "column"} {
		if !strings.Contains(outputs[name], "go run ./cmd/lab -backend=pg-rr explain ") {
			t.Errorf("%s on PostgreSQL points to explain without its -backend:\n%s", name, outputs[name])
		}
	}
	if !strings.Contains(outputs["explain"], "IDEMLAB_PG=… go test ./scenarios -count=1 -lab.strict \\\n    -run '^TestPostgres$/^ser$/^ConflictRace$/^naive$/^serialasduplicate$'") {
		t.Errorf("explain on PostgreSQL SERIALIZABLE does not end with the command that reruns the cell there:\n%s", outputs["explain"])
	}
}

func TestFollowProgressPostgres(t *testing.T) {
	events := []string{
		`{"Action":"run","Test":"TestPostgres"}`,
		`{"Action":"output","Test":"TestPostgres/rc","Output":"    postgres_test.go:70: idemlab-cells: 2\n"}`,
		`{"Action":"pass","Test":"TestPostgres/rc/Race/correct"}`,
		`{"Action":"pass","Test":"TestPostgres/rc/Race/naive/forupdate"}`,
		`{"Action":"pass","Test":"TestPostgres/rc/Race"}`,
		`{"Action":"pass","Test":"TestPostgres/rc"}`,
		`{"Action":"output","Test":"TestPostgres/rr","Output":"    postgres_test.go:70: idemlab-cells: 2\n"}`,
		`{"Action":"fail","Test":"TestPostgres/rr/Race/correct"}`,
		`{"Action":"pass","Test":"TestPostgres/rr/Race"}`,
	}
	var output, line bytes.Buffer
	followProgress(strings.NewReader(strings.Join(events, "\n")), &output, &line, true, 3, 2)
	if !strings.Contains(line.String(), "1 of 4 cells done") || !strings.Contains(line.String(), "3 of 4 cells done") ||
		strings.Contains(line.String(), "4 of 4") || strings.Contains(line.String(), "of 2 ") {
		t.Errorf("followProgress(PostgreSQL) progress line = %q, want 3 of 4 cells: the levels' totals added, no level or scenario counted as a cell", line.String())
	}
}
