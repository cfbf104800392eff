package scenarios_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// mariadbRows are the matrix's rows on MariaDB: every registered variant
// that describes itself there, then the mistakes only MariaDB has.
func mariadbRows() []lab.Variant {
	var rows []lab.Variant
	for _, v := range append(append([]lab.Variant(nil), variants.All...), variants.MariaDBOnly...) {
		if v.MariaDB != nil {
			rows = append(rows, v)
		}
	}
	return rows
}

// TestMariaDB runs every MariaDB scenario against every variant that runs
// there, at every isolation level, as TestMariaDB/<level>/<scenario>/<variant>,
// and compares the verdicts with testdata/mariadb-<level>.golden (-update
// rewrites them). The correct variant must hold every scenario at every
// level. Without IDEMLAB_MARIADB it skips with one line.
func TestMariaDB(t *testing.T) {
	srv := labtest.NeedMariaDB(t)
	t.Logf("MariaDB %s", srv.Version())
	rows := mariadbRows()
	for _, level := range lab.Isolations {
		t.Run(levelSlug(level), func(t *testing.T) {
			path := fmt.Sprintf("testdata/mariadb-%s.golden", levelSlug(level))
			golden, goldenErr := readMariaDBGolden(path)
			rep := labtest.NewReport(scenarios.MariaDB, rows)
			rep.Backend = labtest.MariaDBBackend(level)
			keepReport(rep)
			t.Logf("%s%d", report.CellsMarker, len(scenarios.MariaDB)*len(rows)) // progress for go run ./cmd/lab
			var mu sync.Mutex
			for _, sc := range scenarios.MariaDB {
				t.Run(sc.Name, func(t *testing.T) {
					for _, v := range rows {
						t.Run(v.Name, func(t *testing.T) {
							t.Parallel()
							cell := labtest.RunMariaDBCell(t, sc, v, srv, level)
							mu.Lock()
							rep.Set(v.Name, sc.Name, cell)
							mu.Unlock()
							finished(t, rep, sc, v, cell)
							judgeMariaDB(t, sc, v, level, cell, golden, goldenErr, path)
						})
					}
				})
			}
			if *update && !t.Failed() {
				if !rep.Complete() {
					t.Fatalf("-update needs every cell; run it without -run")
				}
				if err := os.WriteFile(path, []byte(rep.Matrix()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func readMariaDBGolden(path string) (map[string]map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var infos []report.ScenarioInfo
	for _, sc := range scenarios.MariaDB {
		infos = append(infos, sc.Info())
	}
	return report.ParseMatrix(string(data), infos)
}

// judgeMariaDB is judge for a MariaDB cell.
func judgeMariaDB(t *testing.T, sc labtest.Scenario, v lab.Variant, level lab.Isolation, cell *report.Cell, golden map[string]map[string]string, goldenErr error, path string) {
	if !cell.Pass && (*strict || v.Correct()) {
		rerun := rerunCommand(labtest.EnvMariaDB+"=… ",
			"^TestMariaDB$/^"+levelSlug(level)+"$/"+strings.TrimPrefix(report.CellPattern("TestMariaDB", sc.Name, v.Name), "^TestMariaDB$/"))
		t.Errorf("at %s: %s", strings.ToUpper(string(level)), explainFailure(sc, v, cell, rerun))
	}
	if cell.IsNeutral() && v.Correct() {
		t.Errorf("at %s: %s × %s could not judge the correct handler: %s", strings.ToUpper(string(level)), v.Name, sc.Name, cell.Neutral)
	}
	if cell.IsNeutral() {
		t.Logf("%s %s × %s at %s could not judge it: %s", report.Neutral, v.Name, sc.Name, level, cell.Neutral)
	}
	if *update {
		return
	}
	if goldenErr != nil {
		t.Fatalf("%v\nto create it: %s=… go test ./scenarios -run TestMariaDB -update", goldenErr, labtest.EnvMariaDB)
	}
	want, ok := golden[v.Name][sc.Name]
	switch {
	case !ok:
		t.Errorf("%s × %s: not in %s", v.Name, sc.Name, path)
	case want != cell.Mark():
		t.Errorf("%s × %s at %s = %s, want %s (%s): %s", v.Name, sc.Name, level, cell.Mark(), want, path, cell.Detail)
	}
}

// TestMariaDBRegistry holds the MariaDB-only variants to what TestRegistry
// asks of the others: each is named by its package path, says in its
// package doc why it has no row on SQLite and PostgreSQL, and has a
// BUG(lab) note naming the scenarios that catch it, each of them a MariaDB
// scenario the golden matrices mark ✗ at every level.
func TestMariaDBRegistry(t *testing.T) {
	goldens := map[lab.Isolation]map[string]map[string]string{}
	for _, level := range lab.Isolations {
		path := fmt.Sprintf("testdata/mariadb-%s.golden", levelSlug(level))
		g, err := readMariaDBGolden(path)
		if err != nil {
			t.Fatal(err)
		}
		goldens[level] = g
	}
	for _, v := range variants.MariaDBOnly {
		if v.MariaDB == nil || v.MariaDB.New == nil || v.Correct() {
			t.Errorf("%s: a MariaDB-only variant needs a MariaDB form with New, and a Mistake", v.Name)
			continue
		}
		if pkg := packageOf(v.MariaDB.New); pkg != "idemlab/"+v.Name {
			t.Errorf("variant named %q has its MariaDB handler in package %s: Name must be its package path", v.Name, pkg)
		}
		notes, text, err := packageDoc(filepath.Join("..", filepath.FromSlash(v.Name)))
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
			continue
		}
		if !strings.Contains(text, "SQLite") || !strings.Contains(text, "PostgreSQL") {
			t.Errorf("%s: its package doc does not say why it has no row on SQLite and PostgreSQL", v.Name)
		}
		m := caughtBy.FindStringSubmatch(strings.Join(notes, " "))
		if m == nil {
			t.Errorf("%s: its BUG(lab) note says nowhere \"Caught by <Scenario>.\"", v.Name)
			continue
		}
		for _, name := range regexp.MustCompile(`,\s+|\s+and\s+`).Split(m[1], -1) {
			if !slices.ContainsFunc(scenarios.MariaDB, func(s labtest.Scenario) bool { return s.Name == name }) {
				t.Errorf("%s: its BUG(lab) note says it is caught by %s, which is no MariaDB scenario", v.Name, name)
				continue
			}
			for _, level := range lab.Isolations {
				if mark := goldens[level][v.Name][name]; mark != report.Fail {
					t.Errorf("%s: its BUG(lab) note says it is caught by %s, but mariadb-%s.golden marks it %q", v.Name, name, levelSlug(level), mark)
				}
			}
		}
	}
}
