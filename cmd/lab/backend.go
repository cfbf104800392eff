package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"idemlab/lab/report"
)

// Backends: the same scenarios run on SQLite (TestScenarios) and on
// PostgreSQL at three isolation levels (TestPostgres/<level>), and a
// verdict means nothing without its backend. -backend chooses which the
// matrix-running subcommands run; plain go run ./cmd/lab stays SQLite,
// which needs no server.

// exampleDSN is a connection string that works on a Debian machine whose
// PostgreSQL runs locally and knows the user's role.
const exampleDSN = "postgres:///postgres?host=/var/run/postgresql"

// postgresTest is the test in ./scenarios whose subtests are the
// PostgreSQL cells, TestPostgres/<level>/<scenario>/<variant>.
const postgresTest = "TestPostgres"

// backend is one matrix the command can run.
type backend struct {
	flag   string // its name after -backend: "sqlite", "pg-rc"
	name   string // report.Report.Backend: "SQLite", "PostgreSQL READ COMMITTED"
	level  string // TestPostgres's subtest: "rc"; "" on SQLite
	golden string // its golden file, from the module root
}

// backends lists every matrix, in the order the command shows them.
var backends = []backend{
	{"sqlite", report.SQLite, "", "scenarios/testdata/matrix.golden"},
	{"pg-rc", report.PostgresBackend("read committed"), "rc", "scenarios/testdata/postgres-rc.golden"},
	{"pg-rr", report.PostgresBackend("repeatable read"), "rr", "scenarios/testdata/postgres-rr.golden"},
	{"pg-ser", report.PostgresBackend("serializable"), "ser", "scenarios/testdata/postgres-ser.golden"},
}

// backendFlagHelp is what the usage says of -backend's values.
const backendFlagHelp = "sqlite (the default), pg (PostgreSQL at all three levels), pg-rc, pg-rr or pg-ser"

// parseBackend turns -backend's value into the matrices it names.
func parseBackend(value string) ([]backend, error) {
	switch v := strings.ToLower(strings.TrimSpace(value)); v {
	case "", "sqlite":
		return backends[:1], nil
	case "pg", "postgres", "postgresql":
		return backends[1:], nil
	default:
		for _, b := range backends {
			if b.flag == v {
				return []backend{b}, nil
			}
		}
	}
	return nil, usagef("unknown -backend %q; it is sqlite (the default), pg, pg-rc, pg-rr or pg-ser", value)
}

// onPostgres reports whether bs are PostgreSQL's matrices.
func onPostgres(bs []backend) bool { return bs[0].level != "" }

// errNoServer is the one error a PostgreSQL backend gives without a server.
var errNoServer = errors.New("no PostgreSQL server")

// needServer returns, for PostgreSQL's matrices without IDEMLAB_PG, an
// error that says how to set it; nil otherwise.
func needServer(bs []backend, args []string) error {
	if !onPostgres(bs) || os.Getenv(report.EnvPostgres) != "" {
		return nil
	}
	return fmt.Errorf("%w: %s names the server, as a connection string\n"+
		"for a role that may create databases (the tests make one of their own and drop it);\nset it and run again, e.g.\n"+
		"  export %s='%s'\n  go run ./cmd/lab %s",
		errNoServer, report.EnvPostgres, report.EnvPostgres, exampleDSN, strings.Join(args, " "))
}

// prefix is the go test -run pattern that selects bs's matrix test, and
// on PostgreSQL its levels: "^TestScenarios$", "^TestPostgres$/^(rc|ser)$".
// The cells are one or two elements below it (report.Pattern).
func prefix(bs []backend) string {
	if !onPostgres(bs) {
		return "^" + matrixTest + "$"
	}
	var levels []string
	for _, b := range bs {
		levels = append(levels, b.level)
	}
	if len(levels) == 1 {
		return "^" + postgresTest + "$/^" + levels[0] + "$"
	}
	return "^" + postgresTest + "$/^(" + strings.Join(levels, "|") + ")$"
}

// cellDepth is how many slashes a cell's test name has at least:
// TestScenarios/Race/correct, TestPostgres/rc/Race/correct.
func cellDepth(bs []backend) int {
	if onPostgres(bs) {
		return 3
	}
	return 2
}

// backendNamed returns the backend whose report says name ("" is SQLite).
func backendNamed(name string) backend {
	for _, b := range backends {
		if b.name == name {
			return b
		}
	}
	return backends[0]
}

// reproduceCell is the line that ends explain: the command that runs one
// cell as a test, on rep's backend, in strict mode. PostgreSQL's is longer
// by the server and the level, so it is split where a shell lets it be,
// to keep to 100 columns and still paste.
func reproduceCell(rep *report.Report, scenario, variant string) string {
	b := backendNamed(rep.BackendName())
	pattern := report.Pattern(prefix([]backend{b}), scenario, variant)
	if b.level == "" {
		return fmt.Sprintf("the same run as a test:\n  go test ./scenarios -count=1 -lab.strict \\\n    -run '%s'\n", pattern)
	}
	return fmt.Sprintf("the same run as a test:\n  %s=… go test ./scenarios -count=1 -lab.strict \\\n    -run '%s'\n", report.EnvPostgres, pattern)
}

// pick returns the reports of bs from reps, in bs's order, or an error
// naming the first one the run did not write.
func pick(reps []*report.Report, bs []backend) ([]*report.Report, error) {
	var out []*report.Report
	for _, b := range bs {
		rep := report.Backend(reps, b.name)
		if rep == nil {
			return nil, fmt.Errorf("the tests wrote no report for %s", b.name)
		}
		out = append(out, rep)
	}
	return out, nil
}

// titled puts a backend's name over its part of the output when the
// output is not the SQLite matrix alone (whose output stays as it was).
func titled(rep *report.Report, many bool, text string) string {
	if !many && !rep.OnPostgres() {
		return text
	}
	return report.Title(rep.BackendName()) + text
}

// labOn is the command that runs lab on rep's backend: go run ./cmd/lab,
// with -backend=… on PostgreSQL.
func labOn(rep *report.Report) string {
	if b := backendNamed(rep.BackendName()); b.level != "" {
		return "go run ./cmd/lab -backend=" + b.flag
	}
	return "go run ./cmd/lab"
}
