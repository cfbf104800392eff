package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/lab/report"
)

// Backends: the same scenarios run on SQLite (TestScenarios), on
// PostgreSQL at three isolation levels (TestPostgres/<level>) and on
// MariaDB at four (TestMariaDB/<level>), and a verdict means nothing
// without its backend. -backend chooses which the matrix-running
// subcommands run; plain go run ./cmd/lab stays SQLite, which needs no
// server.

// exampleDSN is a connection string that works on a Debian machine whose
// PostgreSQL runs locally and knows the user's role.
const exampleDSN = "postgres:///postgres?host=/var/run/postgresql"

// postgresTest is the test in ./scenarios whose subtests are the
// PostgreSQL cells, TestPostgres/<level>/<scenario>/<variant>.
const postgresTest = "TestPostgres"

// mariadbTest is the test in ./scenarios whose subtests are the MariaDB
// cells, TestMariaDB/<level>/<scenario>/<variant>.
const mariadbTest = "TestMariaDB"

// dbServer is a database server the matrices of some backends run on: the
// test in ./scenarios that runs them, the variable that names the server,
// and how to set it.
type dbServer struct {
	name    string // "PostgreSQL"
	flag    string // -backend's value for all its levels: "pg"
	test    string // "TestPostgres"
	env     string // "IDEMLAB_PG"
	setIt   string // the documented shell line that sets env
	startIt string // what to do when nothing answers where env points
	addrs   func(dsn string) ([]netAddr, error)
}

var (
	postgresServer = &dbServer{name: "PostgreSQL", flag: "pg", test: postgresTest, env: report.EnvPostgres,
		setIt:   "export " + report.EnvPostgres + "='" + exampleDSN + "'",
		startIt: "start it (Debian: pg_ctlcluster 15 main start)", addrs: postgresAddrs}
	mariadbServer = &dbServer{name: "MariaDB", flag: "mariadb", test: mariadbTest, env: report.EnvMariaDB,
		setIt: `eval "$(.ci/mariadb-start)"`, startIt: `start one: eval "$(.ci/mariadb-start)"`, addrs: mariadbAddrs}
)

// backend is one matrix the command can run.
type backend struct {
	flag   string    // its name after -backend: "sqlite", "pg-rc"
	name   string    // report.Report.Backend: "SQLite", "PostgreSQL READ COMMITTED"
	srv    *dbServer // the server it runs on; nil on SQLite
	level  string    // the server test's subtest: "rc"; "" on SQLite
	golden string    // its golden file, from the module root
}

// backends lists every matrix, in the order the command shows them: each
// server's levels together, as its test runs them.
var backends = []backend{
	{"sqlite", report.SQLite, nil, "", "scenarios/testdata/matrix.golden"},
	{"pg-rc", report.PostgresBackend("read committed"), postgresServer, "rc", "scenarios/testdata/postgres-rc.golden"},
	{"pg-rr", report.PostgresBackend("repeatable read"), postgresServer, "rr", "scenarios/testdata/postgres-rr.golden"},
	{"pg-ser", report.PostgresBackend("serializable"), postgresServer, "ser", "scenarios/testdata/postgres-ser.golden"},
	{"mariadb-rc", report.MariaDBBackend("read committed"), mariadbServer, "rc", "scenarios/testdata/mariadb-rc.golden"},
	{"mariadb-rr", report.MariaDBBackend("repeatable read"), mariadbServer, "rr", "scenarios/testdata/mariadb-rr.golden"},
	{"mariadb-rr-si", report.MariaDBBackend("repeatable read") + ", innodb_snapshot_isolation", mariadbServer, "rr-si",
		"scenarios/testdata/mariadb-rr-si.golden"},
	{"mariadb-ser", report.MariaDBBackend("serializable"), mariadbServer, "ser", "scenarios/testdata/mariadb-ser.golden"},
}

// backendFlagHelp is what the usage says of -backend's values.
const backendFlagHelp = "sqlite (the default), pg (PostgreSQL at all three levels), pg-rc, pg-rr or pg-ser, " +
	"mariadb (MariaDB at all four), mariadb-rc, mariadb-rr, mariadb-rr-si or mariadb-ser"

// on returns the backends that run on srv, in order.
func on(srv *dbServer) []backend {
	var bs []backend
	for _, b := range backends {
		if b.srv == srv {
			bs = append(bs, b)
		}
	}
	return bs
}

// parseBackend turns -backend's value into the matrices it names.
func parseBackend(value string) ([]backend, error) {
	switch v := strings.ToLower(strings.TrimSpace(value)); v {
	case "", "sqlite":
		return backends[:1], nil
	case "pg", "postgres", "postgresql":
		return on(postgresServer), nil
	case "mariadb":
		return on(mariadbServer), nil
	default:
		for _, b := range backends {
			if b.flag == v {
				return []backend{b}, nil
			}
		}
	}
	return nil, usagef("unknown -backend %q: sqlite, pg[-rc|-rr|-ser] or mariadb[-rc|-rr|-rr-si|-ser]", value)
}

// onServer reports whether bs are a server's matrices, not SQLite's.
func onServer(bs []backend) bool { return bs[0].srv != nil }

// serverError says in one line that a server's matrices cannot run here
// and what to run first; the command prints it with the usage line and
// exits 1 (the arguments were right: the machine is not ready).
type serverError struct{ msg string }

func (e *serverError) Error() string { return e.msg }

// needServer returns, for a server's matrices, a serverError when the
// server's variable (IDEMLAB_PG, IDEMLAB_MARIADB) is not set or when
// nothing answers at the address it names, so that no test runs only to
// fail on its first connection; nil otherwise, and for SQLite.
func needServer(bs []backend) error {
	srv := bs[0].srv
	if srv == nil {
		return nil
	}
	dsn := os.Getenv(srv.env)
	if dsn == "" {
		return &serverError{fmt.Sprintf("set %s first: %s", srv.env, srv.setIt)}
	}
	addrs, err := srv.addrs(dsn)
	if err != nil {
		return &serverError{fmt.Sprintf("%s does not parse (%v); set it: %s", srv.env, err, srv.setIt)}
	}
	for _, a := range addrs {
		c, err := net.DialTimeout(a.network, a.address, dialTimeout)
		if err == nil {
			c.Close()
			return nil
		}
	}
	return &serverError{fmt.Sprintf("no %s server answers at %s; %s", srv.name, srv.env, srv.startIt)}
}

// dialTimeout bounds the check that a server answers: a local server
// accepts a connection in milliseconds, and a closed socket or port is
// refused at once; only an address that drops packets waits this long.
const dialTimeout = 3 * time.Second

// netAddr is where a server listens: "unix" and a socket's path, or "tcp"
// and host:port.
type netAddr struct{ network, address string }

// mariadbAddrs is where the go-sql-driver DSN dsn connects.
func mariadbAddrs(dsn string) ([]netAddr, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return []netAddr{{cfg.Net, cfg.Addr}}, nil
}

// postgresAddrs is where the libpq connection string dsn connects, its
// fallbacks included: a host that is a directory is a Unix socket in it,
// .s.PGSQL.<port>.
func postgresAddrs(dsn string) ([]netAddr, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	hosts := []*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port}}
	var addrs []netAddr
	for _, h := range append(hosts, cfg.Fallbacks...) {
		if strings.HasPrefix(h.Host, "/") {
			addrs = append(addrs, netAddr{"unix", fmt.Sprintf("%s/.s.PGSQL.%d", h.Host, h.Port)})
			continue
		}
		addrs = append(addrs, netAddr{"tcp", net.JoinHostPort(h.Host, strconv.Itoa(int(h.Port)))})
	}
	return addrs, nil
}

// prefix is the go test -run pattern that selects bs's matrix test, and
// on a server its levels: "^TestScenarios$", "^TestPostgres$/^(rc|ser)$".
// The cells are one or two elements below it (report.Pattern).
func prefix(bs []backend) string {
	if !onServer(bs) {
		return "^" + matrixTest + "$"
	}
	var levels []string
	for _, b := range bs {
		levels = append(levels, b.level)
	}
	test := bs[0].srv.test
	if len(levels) == 1 {
		return "^" + test + "$/^" + levels[0] + "$"
	}
	return "^" + test + "$/^(" + strings.Join(levels, "|") + ")$"
}

// cellDepth is how many slashes a cell's test name has at least:
// TestScenarios/Race/correct, TestPostgres/rc/Race/correct.
func cellDepth(bs []backend) int {
	if onServer(bs) {
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
// cell as a test, on rep's backend, in strict mode. A server's is longer
// by the server and the level, so it is split where a shell lets it be,
// to keep to 100 columns and still paste.
func reproduceCell(rep *report.Report, scenario, variant string) string {
	b := backendNamed(rep.BackendName())
	pattern := report.Pattern(prefix([]backend{b}), scenario, variant)
	if b.level == "" {
		return fmt.Sprintf("the same run as a test:\n  go test ./scenarios -count=1 -lab.strict \\\n    -run '%s'\n", pattern)
	}
	return fmt.Sprintf("the same run as a test:\n  %s=… go test ./scenarios -count=1 -lab.strict \\\n    -run '%s'\n", b.srv.env, pattern)
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
	if !many && !rep.OnServer() {
		return text
	}
	return report.Title(rep.BackendName()) + text
}

// labOn is the command that runs lab on rep's backend: go run ./cmd/lab,
// with -backend=… on a server.
func labOn(rep *report.Report) string {
	if b := backendNamed(rep.BackendName()); b.level != "" {
		return "go run ./cmd/lab -backend=" + b.flag
	}
	return "go run ./cmd/lab"
}
