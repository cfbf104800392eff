// Package exercises holds what every exercise of EXERCISES.md shares: the
// command-line switch that turns an exercise's test from a skip into a
// check, and the checks built from the lab's scenarios.
//
// Each exercise is a package below this one: the starting point (code to
// change) and a test that checks it. By default the test skips, so that
// go test ./... stays green whatever state the exercises are in:
//
//	go test ./exercises/sourcescope -exercise       # is my work done?
//	go test ./exercises/... -exercise.red           # CI: every starting point still fails its check
//
// The reference solutions are checked against the same checks on every
// go test ./... (see ../solutions).
package exercises

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/scenarios"
)

var (
	checkFlag = flag.Bool("exercise", false, "check the exercise: the test fails until the work is done")
	redFlag   = flag.Bool("exercise.red", false, "check that the exercise's starting point fails its check (for CI: an exercise that is already solved teaches nothing)")
)

// A Check returns the guarantees that impl breaks, one message each; none
// means the exercise is solved.
type Check[I any] func(t *testing.T, impl I) []string

// Run is the body of every exercise's test: it skips unless -exercise or
// -exercise.red asks for the check, and then holds impl to it.
func Run[I any](t *testing.T, check Check[I], impl I) {
	t.Helper()
	switch {
	case *redFlag:
		if len(check(t, impl)) == 0 {
			t.Errorf("the starting point already passes its check: the exercise has nothing left to do")
		}
	case *checkFlag:
		for _, f := range check(t, impl) {
			t.Error(f)
		}
	default:
		t.Skipf("an exercise (see EXERCISES.md): check your work with go test ./%s -exercise", packagePath())
	}
}

// Verify holds a reference solution to an exercise's check, always: a
// solution that fails means the exercise ships broken.
func Verify[I any](t *testing.T, check Check[I], solution I) {
	t.Helper()
	for _, f := range check(t, solution) {
		t.Errorf("the reference solution fails its exercise: %s", f)
	}
}

// Scenarios is the check of the exercises that repair a handler: the named
// scenarios of the matrix, each held to the correct standard. A failure
// brings its evidence and transcript, as strict mode does.
func Scenarios(names ...string) Check[lab.Variant] {
	return func(t *testing.T, v lab.Variant) []string {
		var failures []string
		for _, name := range names {
			sc, ok := scenario(name)
			if !ok {
				t.Fatalf("no scenario %q", name)
			}
			cell := labtest.RunCell(t, sc, v)
			if !cell.Pass {
				failures = append(failures, fmt.Sprintf("%s breaks %s: %s\n%s\ntranscript:\n%s",
					v.Name, sc.Name, sc.Shows, strings.Join(cell.Failures, "\n"), cell.Transcript))
			}
		}
		return failures
	}
}

func scenario(name string) (labtest.Scenario, bool) {
	for _, sc := range scenarios.All {
		if sc.Name == name {
			return sc, true
		}
	}
	return labtest.Scenario{}, false
}

// packagePath names the exercise's directory, for the hint of a skipped
// test: go test runs a test in its package's directory.
func packagePath() string {
	if wd, err := os.Getwd(); err == nil {
		if i := strings.LastIndex(wd, "/exercises/"); i >= 0 {
			return wd[i+1:]
		}
	}
	return "exercises/..."
}

// OpenDB creates a database file for a custom check: schema run on it,
// then a connection pool opened with dsn. It is closed when the test ends.
func OpenDB(t *testing.T, dsn func(path string) string, schema string) *sql.DB {
	t.Helper()
	c, err := sqlite.NewConnector(dsn(filepath.Join(t.TempDir(), "exercise.db")))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(schema); err != nil {
		t.Fatalf("schema: %v", err)
	}
	return db
}
