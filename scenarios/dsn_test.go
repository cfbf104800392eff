package scenarios_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"idemlab/lab"
	"idemlab/variants"
)

// TestDSNPaths opens every variant's DSN on file names that a URI would
// misread: each must open exactly that file, with the variant's settings.
// An unescaped '?' drops the settings (foreign keys off), a '#' or a '%'
// opens another file.
func TestDSNPaths(t *testing.T) {
	for _, v := range variants.All {
		problems, err := dsnPathProblems(t.TempDir, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}

var busyTimeout = regexp.MustCompile(`busy_timeout\((\d+)\)`)

// dsnPathProblems opens v's DSN on each misreadable file name, each in a
// fresh directory from tempDir, and says what went wrong; err is a failure
// of the check itself.
func dsnPathProblems(tempDir func() string, v lab.Variant) (problems []string, err error) {
	names := []string{"plain.db", "a?b.db", "a#b.db", "100%25.db", "a%b.db", "with space.db", "ünïcödé.db", "semi;colon&amp.db", "slashes.db"}
	for _, name := range names {
		dir := tempDir()
		path := filepath.Join(dir, name)
		if name == "slashes.db" {
			// The same file written with a leading "//", which POSIX reads
			// as "/": after "file:" a URI reads it as an authority instead.
			path = "/" + path
		}
		c, err := sqlite.NewConnector(v.DSN(path))
		if err != nil {
			return nil, fmt.Errorf("sqlite.NewConnector(%s.DSN(%q)) error = %v", v.Name, path, err)
		}
		db := sql.OpenDB(c)
		if _, err := db.Exec(v.Schema); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: schema on %q: %v", v.Name, path, err)
		}
		db.Close()
		// The settings as a new connection has them (naive/nofk's
		// setup connection had foreign keys; its later ones do not).
		db = sql.OpenDB(c)
		var fk, busy int
		if err := db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil {
			db.Close()
			return nil, err
		}
		if err := db.QueryRow(`PRAGMA busy_timeout`).Scan(&busy); err != nil {
			db.Close()
			return nil, err
		}
		db.Close()
		wantFK, wantBusy := 0, 0
		if strings.Contains(v.DSN("x"), "foreign_keys(1)") {
			wantFK = 1
		}
		if m := busyTimeout.FindStringSubmatch(v.DSN("x")); m != nil {
			wantBusy, _ = strconv.Atoi(m[1])
		}
		if fk != wantFK || busy != wantBusy {
			problems = append(problems, fmt.Sprintf("%s.DSN(%q): foreign_keys = %d, busy_timeout = %d, want %d, %d: the settings were lost", v.Name, name, fk, busy, wantFK, wantBusy))
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		if len(entries) != 1 || entries[0].Name() != name {
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			problems = append(problems, fmt.Sprintf("%s.DSN(%q) created %q, want exactly [%q]", v.Name, name, got, name))
		}
	}
	return problems, nil
}
