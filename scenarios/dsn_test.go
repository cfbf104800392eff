package scenarios_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"idemlab/variants"
)

// TestDSNPaths opens every variant's DSN on file names that a URI would
// misread: each must open exactly that file, with the variant's settings.
// An unescaped '?' drops the settings (foreign keys off), a '#' or a '%'
// opens another file.
func TestDSNPaths(t *testing.T) {
	names := []string{"plain.db", "a?b.db", "a#b.db", "100%25.db", "a%b.db", "with space.db", "ünïcödé.db", "semi;colon&amp.db"}
	for _, v := range variants.All {
		for _, name := range names {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			c, err := sqlite.NewConnector(v.DSN(path))
			if err != nil {
				t.Fatalf("sqlite.NewConnector(%s.DSN(%q)) error = %v", v.Name, path, err)
			}
			db := sql.OpenDB(c)
			if _, err := db.Exec(v.Schema); err != nil {
				t.Fatalf("%s: schema on %q: %v", v.Name, path, err)
			}
			db.Close()
			// The settings as a new connection has them (naive/nofk's
			// setup connection had foreign keys; its later ones do not).
			db = sql.OpenDB(c)
			var fk, busy int
			if err := db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`PRAGMA busy_timeout`).Scan(&busy); err != nil {
				t.Fatal(err)
			}
			db.Close()
			wantFK := 0
			if strings.Contains(v.DSN("x"), "foreign_keys(1)") {
				wantFK = 1
			}
			if fk != wantFK || busy != 5000 {
				t.Errorf("%s.DSN(%q): foreign_keys = %d, busy_timeout = %d, want %d, 5000: the settings were lost", v.Name, name, fk, busy, wantFK)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name() != name {
				var got []string
				for _, e := range entries {
					got = append(got, e.Name())
				}
				t.Errorf("%s.DSN(%q) created %q, want exactly [%q]", v.Name, name, got, name)
			}
		}
	}
}
