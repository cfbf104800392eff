package scenarios_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// TestMariaDB runs every MariaDB scenario against every variant that runs
// there, at every level of MariaDB's axis, as
// TestMariaDB/<level>/<scenario>/<variant>, and compares the verdicts with
// testdata/mariadb-<level>.golden (-update rewrites them). The correct
// variant must hold every scenario at every level. Without IDEMLAB_MARIADB
// it skips with one line.
func TestMariaDB(t *testing.T) { mariadbSuite.run(t) }

// TestMariaDBRegistry holds the MariaDB-only variants to what TestRegistry
// asks of the others: each is named by its package path, says in its
// package doc why it has no row on SQLite and PostgreSQL, and has a
// BUG(lab) note naming the scenarios that catch it, each of them a MariaDB
// scenario the golden matrices mark ✗ at every level.
func TestMariaDBRegistry(t *testing.T) {
	goldens := map[labtest.Level]map[string]map[string]string{}
	for _, level := range mariadbSuite.levels {
		g, err := mariadbSuite.readGolden(mariadbSuite.goldenPath(level))
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
			for _, level := range mariadbSuite.levels {
				if mark := goldens[level][v.Name][name]; mark != report.Fail {
					t.Errorf("%s: its BUG(lab) note says it is caught by %s, but %s marks it %q", v.Name, name, mariadbSuite.goldenPath(level), mark)
				}
			}
		}
	}
}
