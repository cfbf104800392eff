package checks

import (
	"os"
	"slices"
	"testing"

	"idemlab/exercises/repeatableread"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
)

// Exercise 12 runs on a MariaDB server, so its entry joins Exercises here,
// last, as EXERCISES.md lists it, with what it needs of the server beside
// it.
func init() {
	Exercises = append(Exercises, exercise("repeatableread", RepeatableRead, repeatableread.Variant))
}

// RepeatableRead is the check of the repeatableread exercise: every
// scenario of MariaDB's matrices (scenarios.MariaDB, Property included),
// at REPEATABLE READ, the server's default level, held to the correct
// standard; the races first, then the rest in the matrix's order. It runs
// the scenarios as TestMariaDB runs them, on the server IDEMLAB_MARIADB
// names: a check that skipped MariaDB's own behaviour would pass the
// starting point on SQLite, where BEGIN IMMEDIATE makes its read safe.
//
// Without IDEMLAB_MARIADB it does not pass: a student who asked for it
// (-exercise=repeatableread) gets a failure saying how to start a server;
// the tests of the reference solution and the gallery skip, saying why
// (mariadbMissing; go test shows a skip's reason with -v).
var RepeatableRead Check[lab.Variant] = func(c *Checker, v lab.Variant) {
	var srv *labtest.Server
	level := labtest.Level{Isolation: lab.RepeatableRead}
	for _, sc := range repeatableReadOrder() {
		if c.Done() {
			return
		}
		if c.Skips(sc.Name) {
			continue
		}
		if srv == nil {
			srv = needMariaDB(c.T)
		}
		c.record(sc, v, labtest.RunServerCell(c.T, sc, v, srv, level))
	}
}

// repeatableReadFirst are the scenarios the check runs first: the races
// the starting point loses, then the answers a hurried fix gets wrong.
var repeatableReadFirst = []string{"Race", "ConflictRace", "Concurrent", "Duplicate", "UnknownAccount"}

// repeatableReadOrder is scenarios.MariaDB with repeatableReadFirst first.
func repeatableReadOrder() []labtest.Scenario {
	var first, rest []labtest.Scenario
	for _, name := range repeatableReadFirst {
		i := slices.IndexFunc(scenarios.MariaDB, func(s labtest.Scenario) bool { return s.Name == name })
		first = append(first, scenarios.MariaDB[i])
	}
	for _, sc := range scenarios.MariaDB {
		if !slices.Contains(repeatableReadFirst, sc.Name) {
			rest = append(rest, sc)
		}
	}
	return append(first, rest...)
}

// mariadbMissing is what the tests say when IDEMLAB_MARIADB is not set.
var mariadbMissing = report.EnvMariaDB + " is not set: exercise 12 (repeatableread) runs on MariaDB;\n" +
	`start a server of the lab's own with eval "$(.ci/mariadb-start)" and run again`

// needMariaDB returns the server IDEMLAB_MARIADB names. Without it, it
// fails t when the command line asked for this exercise (-exercise,
// -exercise.red with it), and skips t otherwise, saying why.
func needMariaDB(t *testing.T) *labtest.Server {
	t.Helper()
	if os.Getenv(report.EnvMariaDB) == "" {
		if *exerciseFlag == "repeatableread" {
			t.Fatal(mariadbMissing)
		}
		t.Skip(mariadbMissing)
	}
	return labtest.NeedMariaDB(t)
}
