package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
		{"mariadb", []string{"mariadb-rc", "mariadb-rr", "mariadb-rr-si", "mariadb-ser"}},
		{"MariaDB", []string{"mariadb-rc", "mariadb-rr", "mariadb-rr-si", "mariadb-ser"}},
		{"mariadb-rr", []string{"mariadb-rr"}},
		{"mariadb-rr-si", []string{"mariadb-rr-si"}},
		{"mariadb-ser", []string{"mariadb-ser"}},
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
	for _, bad := range []string{"mysql", "pg-", "rc", "pg-rc,pg-rr", "mariadb-", "maria", "mariadb-si"} {
		if _, err := parseBackend(bad); err == nil || !strings.Contains(err.Error(), "pg[-rc|-rr|-ser]") ||
			!strings.Contains(err.Error(), "mariadb[-rc|-rr|-rr-si|-ser]") {
			t.Errorf("parseBackend(%q) error = %v, want one listing the values", bad, err)
		}
	}
}

// TestBackendsMatchGolden checks the table of backends against the files
// and the tests it names: each golden file exists and reads back whole,
// is named after its server's test and level (postgres-rc.golden for
// TestPostgres/rc, mariadb-rr-si.golden for TestMariaDB/rr-si), and the
// tab's -backend value is its server's and level's (pg-rc, mariadb-rr-si).
// Every golden file of a server in scenarios/testdata has a backend.
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
		if b.srv == nil {
			continue
		}
		file := strings.ToLower(strings.TrimPrefix(b.srv.test, "Test"))
		if b.golden != "scenarios/testdata/"+file+"-"+b.level+".golden" || b.flag != b.srv.flag+"-"+b.level ||
			!strings.HasPrefix(b.name, b.srv.name+" ") {
			t.Errorf("backend %+v: its golden file, flag or name is not its server's and level's", b)
		}
	}
	for _, server := range []string{"postgres", "mariadb"} {
		files, _ := filepath.Glob(filepath.Join(root, "scenarios", "testdata", server+"-*.golden"))
		for _, f := range files {
			rel := "scenarios/testdata/" + filepath.Base(f)
			if !slices.ContainsFunc(backends, func(b backend) bool { return b.golden == rel }) {
				t.Errorf("%s has no backend: -backend cannot show it, nor the page", rel)
			}
		}
		if len(files) < 3 {
			t.Errorf("%d golden files of %s, want one per level", len(files), server)
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
	maria, _ := parseBackend("mariadb")
	rr, _ := parseBackend("mariadb-rr")
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
		{pg, "", "", "TestMariaDB/rc/Race/correct", false},
		{maria, "", "", "TestMariaDB/rr-si/Race/correct", true},
		{maria, "", "", "TestPostgres/rr/Race/correct", false},
		{maria, "", "", "TestScenarios/Race/correct", false},
		{rr, "", "", "TestMariaDB/rr/Race/correct", true},
		{rr, "", "", "TestMariaDB/rr-si/Race/correct", false},
		{rr, "Race", "naive/foundrows", "TestMariaDB/rr/Race/naive/foundrows", true},
		{rr, "Race", "naive/foundrows", "TestMariaDB/rr/ConflictRace/naive/foundrows", false},
	} {
		pattern := report.Pattern(prefix(tt.bs), tt.scenario, tt.variant)
		if got := matchesRun(pattern, tt.name); got != tt.want {
			t.Errorf("-run %q selects %s = %v, want %v", pattern, tt.name, got, tt.want)
		}
	}
	if got := matrixTests(pg, prefix(pg)); !got.whole || got.depth != 3 {
		t.Errorf("matrixTests(pg, the whole matrices) = whole %v, depth %d; want true, 3", got.whole, got.depth)
	}
	if got := matrixTests(maria, prefix(maria)); !got.whole || got.depth != 3 || got.matrices != 4 {
		t.Errorf("matrixTests(mariadb, the whole matrices) = whole %v, depth %d, %d matrices; want true, 3, 4", got.whole, got.depth, got.matrices)
	}
	if got := matrixTests(rc, report.Pattern(prefix(rc), "Race", "")); got.whole {
		t.Errorf("matrixTests(pg-rc, a column) = whole, want a part")
	}
}

// TestNoServer: asking for PostgreSQL's or MariaDB's matrices without the
// server's variable (IDEMLAB_PG, IDEMLAB_MARIADB), or with it naming an
// address where nothing answers, prints one line that says what to run
// first (the command the docs give) and the subcommand's usage line, exits
// 1, and runs no test.
func TestNoServer(t *testing.T) {
	const (
		setPG      = "lab: set IDEMLAB_PG first: export IDEMLAB_PG='postgres:///postgres?host=/var/run/postgresql'\n"
		setMariaDB = "lab: set IDEMLAB_MARIADB first: eval \"$(.ci/mariadb-start)\"\n"
		downPG     = "lab: no PostgreSQL server answers at IDEMLAB_PG; start it (Debian: pg_ctlcluster 15 main start)\n"
		downMaria  = "lab: no MariaDB server answers at IDEMLAB_MARIADB; start one: eval \"$(.ci/mariadb-start)\"\n"
	)
	gone := filepath.Join(t.TempDir(), "gone") // no server listens in a new directory
	for _, env := range []struct {
		pg, mariadb    string
		wantPG, wantMa string
	}{
		{"", "", setPG, setMariaDB},
		{"postgres:///postgres?host=" + gone, "idemlab:idemlab@unix(" + gone + "/mariadbd.sock)/idemlab", downPG, downMaria},
		// Port 1 on loopback: tcpmux, which nothing here serves.
		{"postgres://idemlab@127.0.0.1:1/postgres", "idemlab:idemlab@tcp(127.0.0.1:1)/idemlab", downPG, downMaria},
	} {
		t.Setenv(report.EnvPostgres, env.pg)
		t.Setenv(report.EnvMariaDB, env.mariadb)
		for _, args := range [][]string{
			{"-backend=pg"},
			{"-backend=pg-rc", "-evidence"},
			{"-backend=pg-ser", "-json"},
			{"-backend=pg", "row", "checkthenacttx"},
			{"-backend=pg-rr", "column", "Race"},
			{"-backend=pg", "explain", "correct", "Race"},
			{"-backend=pg", "permutations", "forupdate"},
			{"-backend=mariadb"},
			{"-backend=mariadb-rc", "-evidence"},
			{"-backend=mariadb-rr-si", "-json"},
			{"-backend=mariadb", "row", "foundrows"},
			{"-backend=mariadb-ser", "column", "DLock"},
			{"-backend=mariadb", "explain", "insertignore", "Inval"},
		} {
			c := commands[0] // the matrix
			if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
				var err error
				if c, err = lookupCommand(args[1]); err != nil {
					t.Fatal(err)
				}
			}
			want := env.wantPG
			if strings.HasPrefix(args[0], "-backend=mariadb") {
				want = env.wantMa
			}
			want += c.usageLine() + "\n"
			var stdout, stderr bytes.Buffer
			status := run(args, &stdout, &stderr)
			if status != exitFail || stdout.Len() != 0 || stderr.String() != want {
				t.Errorf("run(%q) with IDEMLAB_PG=%q IDEMLAB_MARIADB=%q = %d, stdout %q, stderr %q; want %d, nothing on stdout, stderr %q",
					args, env.pg, env.mariadb, status, stdout.String(), stderr.String(), exitFail, want)
			}
			for _, line := range strings.Split(stderr.String(), "\n") {
				if w := utf8.RuneCountInString(line); w > report.Width {
					t.Errorf("run(%q): a line %d wide, want at most %d: %q", args, w, report.Width, line)
				}
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
		{[]string{"-backend=mariadb", "web"}, exitUsage, "-backend applies to"},
		{[]string{"-backend=mariadb-rc", "diff", "foundrows"}, exitUsage, "-backend applies to"},
		{[]string{"-backend=mariadb-rr", "explain", "exercises/checkthenact", "Race"}, exitUsage, "runs on SQLite only"},
	} {
		var stdout, stderr bytes.Buffer
		if status := run(tt.args, &stdout, &stderr); status != tt.status || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("run(%q) = %d, stderr %q; want %d, stderr containing %q", tt.args, status, stderr.String(), tt.status, tt.stderr)
		}
	}
}

// pgReports are testReport on PostgreSQL's three levels.
func pgReports() []*report.Report { return serverReports(postgresServer) }

// serverReports are testReport on each level of srv.
func serverReports(srv *dbServer) []*report.Report {
	var reps []*report.Report
	for _, b := range on(srv) {
		rep := testReport()
		rep.Backend = b.name
		reps = append(reps, rep)
	}
	return reps
}

func TestRenderMatrices(t *testing.T) {
	reps := pgReports()
	got := renderMatrices(reps, true, "pg")
	for _, b := range on(postgresServer) {
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
	// MariaDB's levels likewise, with their own hint and correct's retry
	// on MariaDB; one level alone is titled too.
	maria := serverReports(mariadbServer)
	got = renderMatrices(maria, false, "mariadb")
	for _, b := range on(mariadbServer) {
		if !strings.Contains(got, b.name+"\n"+strings.Repeat("=", len(b.name))+"\n") {
			t.Errorf("renderMatrices(mariadb) does not title the matrix of %s:\n%s", b.name, got)
		}
	}
	if !strings.Contains(got, "go run ./cmd/lab -backend=mariadb row VARIANT") || !strings.Contains(got, "1213") ||
		strings.Contains(got, "BEGIN IMMEDIATE") || strings.Contains(got, "40001") {
		t.Errorf("renderMatrices(mariadb) lacks its hint or says what correct does elsewhere:\n%s", got)
	}
	if got := renderMatrices(maria[3:], false, "mariadb-ser"); !strings.HasPrefix(got, "MariaDB SERIALIZABLE\n====") {
		t.Errorf("renderMatrices(mariadb-ser) is untitled:\n%s", got)
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
	maria := serverReports(mariadbServer)
	for _, rep := range maria {
		rep.Variants[1].Name = "naive/deadlockasduplicate"
	}
	outputs["mariadb matrix"] = renderMatrices(maria, true, "mariadb")
	outputs["mariadb explain"], _ = each(maria[2:3], func(rep *report.Report) (string, error) {
		return renderExplain(rep, "naive/deadlockasduplicate", "Race")
	})
	for _, flag := range []string{"pg", "pg-rc", "pg-ser", "mariadb", "mariadb-rr-si"} {
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
	if !strings.Contains(outputs["mariadb explain"], "IDEMLAB_MARIADB=… go test ./scenarios -count=1 -lab.strict \\\n    -run '^TestMariaDB$/^rr-si$/^Race$/^naive$/^deadlockasduplicate$'") {
		t.Errorf("explain on MariaDB rr-si does not end with the command that reruns the cell there:\n%s", outputs["mariadb explain"])
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
