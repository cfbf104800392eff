package scenarios_test

import "testing"

// TestPostgres runs every PostgreSQL scenario against every variant that
// runs there, at every isolation level, as
// TestPostgres/<level>/<scenario>/<variant>, and compares the verdicts with
// testdata/postgres-<level>.golden (-update rewrites them, docs/postgres.md's
// matrices and docs/engines.md's table). As on SQLite, the correct variant
// must hold every scenario at every level.
func TestPostgres(t *testing.T) {
	postgresSuite.run(t, func() error {
		for _, block := range []string{"postgres", "engines"} {
			if err := updateReadmeBlock(block); err != nil {
				return err
			}
		}
		return nil
	})
}
