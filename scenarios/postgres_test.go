package scenarios_test

import "testing"

// TestPostgres runs every PostgreSQL scenario against every variant that
// runs there, at every isolation level, as
// TestPostgres/<level>/<scenario>/<variant>, and compares the verdicts with
// testdata/postgres-<level>.golden (-update rewrites them, and the README's
// PostgreSQL matrices). As on SQLite, the correct variant must hold every
// scenario at every level.
func TestPostgres(t *testing.T) {
	postgresSuite.run(t)
	if *update && !t.Failed() {
		if err := updateReadmeBlock("postgres"); err != nil {
			t.Fatal(err)
		}
	}
}
