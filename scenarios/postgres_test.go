package scenarios_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// postgresRows are the matrix's rows on PostgreSQL: every registered variant
// that describes itself there, then the mistakes only PostgreSQL has.
func postgresRows() []lab.Variant {
	var rows []lab.Variant
	for _, v := range append(append([]lab.Variant(nil), variants.All...), variants.PostgresOnly...) {
		if v.Postgres != nil {
			rows = append(rows, v)
		}
	}
	return rows
}

// levelSlug names an isolation level in test and file names.
func levelSlug(level lab.Isolation) string {
	return map[lab.Isolation]string{lab.ReadCommitted: "rc", lab.RepeatableRead: "rr", lab.Serializable: "ser"}[level]
}

// TestPostgres runs every PostgreSQL scenario against every variant that
// runs there, at every isolation level, as
// TestPostgres/<level>/<scenario>/<variant>, and compares the verdicts with
// testdata/postgres-<level>.golden (-update rewrites them). As on SQLite,
// the correct variant must hold every scenario at every level.
func TestPostgres(t *testing.T) {
	srv := labtest.NeedPostgres(t)
	t.Logf("PostgreSQL %s", srv.Version())
	rows := postgresRows()
	for _, level := range lab.Isolations {
		t.Run(levelSlug(level), func(t *testing.T) {
			path := fmt.Sprintf("testdata/postgres-%s.golden", levelSlug(level))
			golden, goldenErr := readPostgresGolden(path)
			rep := labtest.NewReport(scenarios.Postgres, rows)
			rep.Backend = report.PostgresBackend(string(level))
			keepReport(rep)
			t.Logf("%s%d", report.CellsMarker, len(scenarios.Postgres)*len(rows)) // progress for go run ./cmd/lab
			var mu sync.Mutex
			for _, sc := range scenarios.Postgres {
				t.Run(sc.Name, func(t *testing.T) {
					for _, v := range rows {
						t.Run(v.Name, func(t *testing.T) {
							t.Parallel()
							cell := labtest.RunPostgresCell(t, sc, v, srv, level)
							mu.Lock()
							rep.Set(v.Name, sc.Name, cell)
							mu.Unlock()
							finished(t, rep, sc, v, cell)
							judgePostgres(t, sc, v, level, cell, golden, goldenErr, path)
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
	if *update && !t.Failed() {
		if err := updateReadmeBlock("postgres"); err != nil {
			t.Fatal(err)
		}
	}
}

func readPostgresGolden(path string) (map[string]map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var infos []report.ScenarioInfo
	for _, sc := range scenarios.Postgres {
		infos = append(infos, sc.Info())
	}
	return report.ParseMatrix(string(data), infos)
}

// judgePostgres is judge for a PostgreSQL cell.
func judgePostgres(t *testing.T, sc labtest.Scenario, v lab.Variant, level lab.Isolation, cell *report.Cell, golden map[string]map[string]string, goldenErr error, path string) {
	if !cell.Pass && (*strict || v.Correct()) {
		rerun := rerunCommand(labtest.EnvPostgres+"=… ",
			"^TestPostgres$/^"+levelSlug(level)+"$/"+strings.TrimPrefix(report.CellPattern("TestPostgres", sc.Name, v.Name), "^TestPostgres$/"))
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
		t.Fatalf("%v\nto create it: %s=… go test ./scenarios -run TestPostgres -update", goldenErr, labtest.EnvPostgres)
	}
	want, ok := golden[v.Name][sc.Name]
	switch {
	case !ok:
		t.Errorf("%s × %s: not in %s", v.Name, sc.Name, path)
	case want != cell.Mark():
		t.Errorf("%s × %s at %s = %s, want %s (%s): %s", v.Name, sc.Name, level, cell.Mark(), want, path, cell.Detail)
	}
}
