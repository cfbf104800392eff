package scenarios_test

import (
	"fmt"
	"os"
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

// suite is one server's matrices: the test that runs them, the server, the
// scenarios (columns) and variants (rows) run there, and the backend axis,
// a matrix and a golden file per level. TestPostgres and TestMariaDB are
// the same runner over two suites.
type suite struct {
	name      string // "PostgreSQL"
	test      string // "TestPostgres": the test's name, for rerun commands
	file      string // "postgres": the goldens are testdata/<file>-<slug>.golden
	env       string // the environment variable that names the server
	need      func(testing.TB) *labtest.Server
	scenarios []labtest.Scenario
	rows      func() []lab.Variant
	levels    []labtest.Level
	// atOnce: every cell of every level may run beside any other, as
	// many at a time as -parallel allows, instead of a column's cells
	// beside each other and the columns and levels one after another.
	// The cells of a server suite spend most of their time waiting for
	// the server's answers, and each runs in a namespace of its own, so
	// a cell is judged the same whatever runs beside it.
	atOnce bool
}

// levels returns a Level for each isolation level.
func levels(isolations ...lab.Isolation) []labtest.Level {
	var ls []labtest.Level
	for _, i := range isolations {
		ls = append(ls, labtest.Level{Isolation: i})
	}
	return ls
}

var postgresSuite = suite{
	name: "PostgreSQL", test: "TestPostgres", file: "postgres", env: report.EnvPostgres, need: labtest.NeedPostgres,
	scenarios: scenarios.Postgres, rows: postgresRows, levels: levels(lab.Isolations...),
}

var mariadbSuite = suite{
	name: "MariaDB", test: "TestMariaDB", file: "mariadb", env: report.EnvMariaDB, need: labtest.NeedMariaDB,
	scenarios: scenarios.MariaDB, rows: mariadbRows,
	// REPEATABLE READ twice: as the server's default has it, and with
	// innodb_snapshot_isolation=ON, under which a read-first handler's
	// stale check becomes a 1020 that its retry runs again.
	levels: []labtest.Level{{Isolation: lab.ReadCommitted}, {Isolation: lab.RepeatableRead},
		{Isolation: lab.RepeatableRead, SnapshotIsolation: true}, {Isolation: lab.Serializable}},
	atOnce: true,
}

// serverRows are the matrix's rows on a server: every registered variant,
// then the mistakes only that server has, that describe themselves there
// (has).
func serverRows(only []lab.Variant, has func(lab.Variant) bool) []lab.Variant {
	var rows []lab.Variant
	for _, v := range append(append([]lab.Variant(nil), variants.All...), only...) {
		if has(v) {
			rows = append(rows, v)
		}
	}
	return rows
}

// postgresRows are the matrix's rows on PostgreSQL: every registered variant
// that describes itself there, then the mistakes only PostgreSQL has.
func postgresRows() []lab.Variant {
	return serverRows(variants.PostgresOnly, func(v lab.Variant) bool { return v.Postgres != nil })
}

// mariadbRows are the matrix's rows on MariaDB: every registered variant
// that describes itself there, then the mistakes SQLite does not make
// that MariaDB makes too (checkthenacttx, forupdate), then the mistakes
// only MariaDB has.
func mariadbRows() []lab.Variant {
	return serverRows(slices.Concat(variants.PostgresOnly, variants.MariaDBOnly), func(v lab.Variant) bool { return v.MariaDB != nil })
}

// levelSlug names an isolation level in test and file names.
func levelSlug(level lab.Isolation) string {
	return map[lab.Isolation]string{lab.ReadCommitted: "rc", lab.RepeatableRead: "rr", lab.Serializable: "ser"}[level]
}

// slug names a level of a server's axis in test and file names:
// REPEATABLE READ with innodb_snapshot_isolation is rr-si.
func slug(l labtest.Level) string {
	if l.SnapshotIsolation {
		return levelSlug(l.Isolation) + "-si"
	}
	return levelSlug(l.Isolation)
}

// backend names the matrix at level in reports: "PostgreSQL READ
// COMMITTED", as report.PostgresBackend does, and "MariaDB REPEATABLE
// READ, innodb_snapshot_isolation".
func (s suite) backend(l labtest.Level) string {
	b := s.name + " " + strings.ToUpper(string(l.Isolation))
	if l.SnapshotIsolation {
		b += ", innodb_snapshot_isolation"
	}
	return b
}

// goldenPath is the golden file of the matrix at level.
func (s suite) goldenPath(l labtest.Level) string {
	return fmt.Sprintf("testdata/%s-%s.golden", s.file, slug(l))
}

// run runs every scenario of s against every row, at every level, as
// <test>/<level>/<scenario>/<variant>, and compares the verdicts with the
// level's golden file (-update rewrites them); then, with -update, it
// calls then, if nothing failed. The correct variant must hold every
// scenario at every level, as on SQLite. Without the server's environment
// variable it skips with one line.
func (s suite) run(t *testing.T, then func() error) {
	srv := s.need(t)
	t.Logf("%s %s", s.name, srv.Version())
	rows := s.rows()
	// With atOnce the subtests below return before their cells have run:
	// what needs every cell waits for them in a cleanup.
	t.Cleanup(func() {
		if *update && !t.Failed() && then != nil {
			if err := then(); err != nil {
				t.Error(err)
			}
		}
	})
	for _, level := range s.levels {
		t.Run(slug(level), func(t *testing.T) {
			if s.atOnce {
				t.Parallel()
			}
			path := s.goldenPath(level)
			golden, goldenErr := s.readGolden(path)
			rep := labtest.NewReport(s.scenarios, rows)
			rep.Backend = s.backend(level)
			keepReport(rep)
			t.Logf("%s%d", report.CellsMarker, len(s.scenarios)*len(rows)) // progress for go run ./cmd/lab
			t.Cleanup(func() {
				if !*update || t.Failed() {
					return
				}
				if !rep.Complete() {
					t.Errorf("-update needs every cell; run it without -run")
					return
				}
				if err := os.WriteFile(path, []byte(rep.Matrix()), 0o644); err != nil {
					t.Error(err)
				}
			})
			var mu sync.Mutex
			for _, sc := range s.scenarios {
				t.Run(sc.Name, func(t *testing.T) {
					if s.atOnce {
						t.Parallel()
					}
					for _, v := range rows {
						t.Run(v.Name, func(t *testing.T) {
							t.Parallel()
							cell := labtest.RunServerCell(t, sc, v, srv, level)
							mu.Lock()
							rep.Set(v.Name, sc.Name, cell)
							mu.Unlock()
							finished(t, rep, sc, v, cell)
							s.judge(t, sc, v, level, cell, golden, goldenErr, path)
						})
					}
				})
			}
		})
	}
}

// readGolden reads the golden matrix at path: each variant's mark in each
// of s's scenarios.
func (s suite) readGolden(path string) (map[string]map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var infos []report.ScenarioInfo
	for _, sc := range s.scenarios {
		infos = append(infos, sc.Info())
	}
	return report.ParseMatrix(string(data), infos)
}

// goldens reads the golden matrix of every level of s.
func (s suite) goldens(t *testing.T) map[labtest.Level]map[string]map[string]string {
	t.Helper()
	goldens := map[labtest.Level]map[string]map[string]string{}
	for _, level := range s.levels {
		g, err := s.readGolden(s.goldenPath(level))
		if err != nil {
			t.Fatal(err)
		}
		goldens[level] = g
	}
	return goldens
}

// judge is judge for a cell of s at level.
func (s suite) judge(t *testing.T, sc labtest.Scenario, v lab.Variant, level labtest.Level, cell *report.Cell, golden map[string]map[string]string, goldenErr error, path string) {
	at := s.backend(level)
	if !cell.Pass && (*strict || v.Correct()) {
		rerun := rerunCommand(s.env+"=… ",
			"^"+s.test+"$/^"+slug(level)+"$/"+strings.TrimPrefix(report.CellPattern(s.test, sc.Name, v.Name), "^"+s.test+"$/"))
		t.Errorf("at %s: %s", at, explainFailure(sc, v, cell, rerun))
	}
	if cell.IsNeutral() && v.Correct() {
		t.Errorf("at %s: %s × %s could not judge the correct handler: %s", at, v.Name, sc.Name, cell.Neutral)
	}
	if cell.IsNeutral() {
		t.Logf("%s %s × %s at %s could not judge it: %s", report.Neutral, v.Name, sc.Name, at, cell.Neutral)
	}
	if *update {
		return
	}
	if goldenErr != nil {
		t.Fatalf("%v\nto create it: %s=… go test ./scenarios -run %s -update", goldenErr, s.env, s.test)
	}
	want, ok := golden[v.Name][sc.Name]
	switch {
	case !ok:
		t.Errorf("%s × %s: not in %s", v.Name, sc.Name, path)
	case want != cell.Mark():
		t.Errorf("%s × %s at %s = %s, want %s (%s): %s", v.Name, sc.Name, at, cell.Mark(), want, path, cell.Detail)
	}
}
