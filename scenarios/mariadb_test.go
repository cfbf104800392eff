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
// testdata/mariadb-<level>.golden (-update rewrites them, and
// docs/engines.md's table). The correct variant must hold every scenario
// at every level. Without IDEMLAB_MARIADB it skips with one line.
func TestMariaDB(t *testing.T) {
	mariadbSuite.run(t, func() error { return updateReadmeBlock("engines") })
}

// TestMariaDBRegistry holds the MariaDB-only variants to what TestRegistry
// asks of the others: each is named by its package path, says in its
// package doc why it has no row on SQLite and PostgreSQL, and has a
// BUG(lab) note naming the scenarios that catch it, each of them a MariaDB
// scenario the golden matrices mark ✗ at every level.
func TestMariaDBRegistry(t *testing.T) {
	goldens := mariadbSuite.goldens(t)
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

// mariadbCaught finds what the BUG(lab) note of a variant that has a row
// on PostgreSQL and MariaDB but not on SQLite says catches it on MariaDB,
// and at which levels: "On MariaDB, caught by Race and Concurrent at READ
// COMMITTED and REPEATABLE READ."
var mariadbCaught = regexp.MustCompile(`On MariaDB, caught by ([A-Z]\w*(?:(?:, | and )[A-Z]\w*)*) at ([A-Z][A-Z ]*[A-Z](?:(?:, | and )[A-Z][A-Z ]*[A-Z])*)\.`)

// TestMariaDBServerOnlyNotes holds each variant of variants.PostgresOnly
// that has a MariaDB form to its BUG(lab) note's word on MariaDB: every
// scenario it names is ✗ in the golden matrix of every level it names
// ("REPEATABLE READ" is the server's default, without
// innodb_snapshot_isolation), and ✓ at every other level, where the same
// code is right. Such a note that says nothing of MariaDB fails it.
func TestMariaDBServerOnlyNotes(t *testing.T) {
	goldens := mariadbSuite.goldens(t)
	checked := 0
	for _, v := range variants.PostgresOnly {
		if v.MariaDB == nil {
			continue
		}
		checked++
		notes, _, err := packageDoc(filepath.Join("..", filepath.FromSlash(v.Name)))
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		m := mariadbCaught.FindStringSubmatch(strings.Join(strings.Fields(strings.Join(notes, " ")), " "))
		if m == nil {
			t.Errorf("%s: its BUG(lab) note says nowhere \"On MariaDB, caught by <Scenario> at <LEVEL>.\"", v.Name)
			continue
		}
		split := regexp.MustCompile(`, | and `)
		named := split.Split(m[2], -1)
		for _, n := range named {
			if !slices.ContainsFunc(mariadbSuite.levels, func(l labtest.Level) bool { return levelName(l) == n }) {
				t.Errorf("%s: its BUG(lab) note names %q, which is no level of MariaDB's axis", v.Name, n)
			}
		}
		for _, name := range split.Split(m[1], -1) {
			if !slices.ContainsFunc(scenarios.MariaDB, func(s labtest.Scenario) bool { return s.Name == name }) {
				t.Errorf("%s: its BUG(lab) note says it is caught by %s on MariaDB, which is no MariaDB scenario", v.Name, name)
				continue
			}
			for _, level := range mariadbSuite.levels {
				want := report.Pass
				if slices.Contains(named, levelName(level)) {
					want = report.Fail
				}
				if mark := goldens[level][v.Name][name]; mark != want {
					t.Errorf("%s × %s in %s = %s, want %s, as its BUG(lab) note on MariaDB says", v.Name, name, mariadbSuite.goldenPath(level), mark, want)
				}
			}
		}
	}
	if checked == 0 {
		t.Errorf("no variant of variants.PostgresOnly has a MariaDB form: forupdate and checkthenacttx have")
	}
}

// levelName is how a BUG(lab) note names a level of MariaDB's axis: its
// isolation level in capitals, and REPEATABLE READ with
// innodb_snapshot_isolation=ON as "REPEATABLE READ WITH SNAPSHOT
// ISOLATION".
func levelName(l labtest.Level) string {
	n := strings.ToUpper(string(l.Isolation))
	if l.SnapshotIsolation {
		n += " WITH SNAPSHOT ISOLATION"
	}
	return n
}
