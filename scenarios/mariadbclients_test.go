package scenarios_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/naive/checkthenacttx"
	"idemlab/naive/forupdate"
)

// The cross-check with two real mariadb command-line clients, MariaDB's
// twin of TestIsolationTester. Each spec in testdata/mariadb-clients names,
// as permutations, schedules that the kit's race scenarios run on MariaDB;
// its steps are the statements the kit's handler sends at those steps,
// literally, in isolationtester's spec format. TestMariaDBClients runs every
// permutation twice, on a database of its own each time:
//
//   - through two mariadb client processes, one per session, fed one
//     statement at a time on their standard input, with nothing of the kit
//     between them and the server. After each statement the test sends a
//     marker, SELECT 'idemlab-step', n, ROW_COUNT(), which the client runs
//     only once the statement has ended, and which says what it counted.
//     Until the marker comes back, the test asks the server, on a
//     connection of its own, whether the session waits for a lock the
//     other session holds, in information_schema.INNODB_TRX joined to
//     INNODB_LOCK_WAITS: a wait is seen there, never assumed after a delay.
//     Those tables are a cache InnoDB refills only when read after 0.1 s
//     without reads (mariadb.TestInnoDBTrxIsACache), so they are read at
//     most every clientPoll;
//   - through the kit's engine, with labtest.Plan, at the same level.
//
// For every step the two must agree on whether it waited, on its result
// (a SELECT's row, an INSERT's or UPDATE's count, or the error's number,
// SQLSTATE and message), and on when it completed: a step that waited
// completes during a later step, and the kit's transcript must list the
// completions in an order the clients' allow. At the end they must agree
// on the balance and on the inbox. If they disagree, the kit is wrong
// until shown otherwise.

// clientPoll is how often the test reads INNODB_TRX: more often than
// every 0.1 s the cache is never refilled, and a wait that began after the
// last refill is never seen.
const clientPoll = 150 * time.Millisecond

// clientStuck is how long a step may be neither ended nor seen waiting
// before the test gives up on it.
const clientStuck = time.Minute

// clientCase is one spec: the kit's scenario, variant and deliveries it
// stands for, and the levels of MariaDB's axis it is run at.
type clientCase struct {
	spec     string
	scenario string
	variant  lab.Variant
	levels   []labtest.Level
	sessions [][]lab.Event
}

var (
	clientRC    = labtest.Level{Isolation: lab.ReadCommitted}
	clientRR    = labtest.Level{Isolation: lab.RepeatableRead}
	clientRRSI  = labtest.Level{Isolation: lab.RepeatableRead, SnapshotIsolation: true}
	clientSer   = labtest.Level{Isolation: lab.Serializable}
	clientEvery = []labtest.Level{clientRC, clientRR, clientRRSI, clientSer}
)

var clientCases = []clientCase{
	{"correct-race", "Race", correct.Variant, clientEvery, race},
	{"correct-distinct", "DistinctRace", correct.Variant, clientEvery, dist},
	{"correct-conflict", "ConflictRace", correct.Variant, clientEvery, confl},
	{"checkthenacttx-race", "Race", checkthenacttx.Variant, []labtest.Level{clientRC, clientRR}, race},
	{"checkthenacttx-race-ser", "Race", checkthenacttx.Variant, []labtest.Level{clientSer}, race},
	{"checkthenacttx-race-si", "Race", checkthenacttx.Variant, []labtest.Level{clientRRSI}, race},
	{"forupdate-race-rc", "Race", forupdate.Variant, []labtest.Level{clientRC}, race},
	{"forupdate-race-rr", "Race", forupdate.Variant, []labtest.Level{clientRR, clientRRSI, clientSer}, race},
}

// clientStep is what one side saw of one step of a permutation.
type clientStep struct {
	sql    string // the statement, whitespace collapsed, no trailing ;
	waited bool   // it waited for the other session's lock
	result string // "ok", "1 row", "no row", "(1, 500)", "error 1213 (40001): …"
	epoch  int    // the index in the permutation of the step during which it ended
	done   bool
}

// clientRun is one permutation as one side ran it: its steps by kit step
// name ("B3"), the order in which they ended, and the state at the end.
type clientRun struct {
	steps   map[string]*clientStep
	done    []string
	balance string
	inbox   []string // "source/event_id account amount", sorted
}

func TestMariaDBClients(t *testing.T) {
	srv := labtest.NeedMariaDB(t)
	bin, err := exec.LookPath("mariadb")
	if err != nil {
		t.Fatalf("the mariadb command-line client: %v (Debian ships it in mariadb-client)", err)
	}
	cl, err := newClients(bin, os.Getenv(report.EnvMariaDB))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.close()
	start := time.Now()
	var agreed []string
	for _, c := range clientCases {
		path := filepath.Join("testdata", "mariadb-clients", c.spec+".spec")
		spec := readClientSpec(t, path, c)
		for _, level := range c.levels {
			t.Run(c.spec+"/"+slug(level), func(t *testing.T) {
				for _, perm := range spec.perms {
					theirs := cl.run(t, spec, level, perm)
					ours := runKitMariaDB(t, c, srv, level, perm, spec.check)
					if diffs := compareClientRuns(perm, spec, theirs, ours); len(diffs) > 0 {
						t.Errorf("%s at %s, permutation %s: the kit and the mariadb clients disagree:\n\t%s",
							path, slug(level), strings.Join(perm, " "), strings.Join(diffs, "\n\t"))
						continue
					}
					agreed = append(agreed, fmt.Sprintf("%-24s %-6s %-46s %s", c.spec, slug(level), kitSchedule(perm, spec.check), clientSummary(ours)))
				}
			})
		}
	}
	t.Logf("two mariadb clients and the kit agree on %d permutations (%v):\n%s", len(agreed), time.Since(start).Round(time.Millisecond), strings.Join(agreed, "\n"))
}

// TestMariaDBClientsCatchEdits holds compareClientRuns to what the
// cross-check is for: a permutation both sides ran, with the kit's
// transcript or outcome edited one way at a time, must be reported as a
// disagreement every time. The permutation is checkthenacttx's double
// credit at READ COMMITTED: a wait, a 0-row INSERT and a wrong balance.
func TestMariaDBClientsCatchEdits(t *testing.T) {
	srv := labtest.NeedMariaDB(t)
	bin, err := exec.LookPath("mariadb")
	if err != nil {
		t.Fatalf("the mariadb command-line client: %v", err)
	}
	cl, err := newClients(bin, os.Getenv(report.EnvMariaDB))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.close()
	c := clientCases[slices.IndexFunc(clientCases, func(c clientCase) bool { return c.spec == "checkthenacttx-race" })]
	spec := readClientSpec(t, filepath.Join("testdata", "mariadb-clients", c.spec+".spec"), c)
	perm := spec.perms[0]
	theirs := cl.run(t, spec, clientRC, perm)
	ours := runKitMariaDB(t, c, srv, clientRC, perm, spec.check)
	if diffs := compareClientRuns(perm, spec, theirs, ours); len(diffs) > 0 {
		t.Fatalf("unedited, the two sides disagree: %s", strings.Join(diffs, "; "))
	}
	if b3 := ours.steps["B3"]; b3 == nil || !b3.waited || b3.result != "0 rows" || ours.balance != "1000" {
		t.Fatalf("checkthenacttx-race at rc: B3 = %+v, balance %s; want it waited, 0 rows, balance 1000", b3, ours.balance)
	}
	for _, e := range []struct {
		name string
		edit func(r *clientRun)
	}{
		{"B3 counted 1 row", func(r *clientRun) { r.steps["B3"].result = "1 row" }},
		{"B3 did not wait", func(r *clientRun) { r.steps["B3"].waited = false }},
		{"B3 failed with a deadlock", func(r *clientRun) {
			r.steps["B3"].result = "error 1213 (40001): Deadlock found when trying to get lock; try restarting transaction"
		}},
		{"A2 found the row", func(r *clientRun) { r.steps["A2"].result = "(1, 500)" }},
		{"B3 ended before A4", func(r *clientRun) {
			i, j := slices.Index(r.done, "B3"), slices.Index(r.done, "A4")
			r.done[i], r.done[j] = r.done[j], r.done[i]
		}},
		{"the balance is 500", func(r *clientRun) { r.balance = "500" }},
		{"one inbox row fewer", func(r *clientRun) { r.inbox = r.inbox[:len(r.inbox)-1] }},
		{"a step the permutation does not name", func(r *clientRun) {
			r.steps["B6"] = &clientStep{sql: "COMMIT", result: "ok", done: true}
			r.done = append(r.done, "B6")
		}},
	} {
		edited := cloneClientRun(ours)
		e.edit(&edited)
		if diffs := compareClientRuns(perm, spec, theirs, edited); len(diffs) == 0 {
			t.Errorf("compareClientRuns(the clients' run, the kit's with %s) = no difference, want one", e.name)
		}
	}
}

// cloneClientRun copies r deeply enough for an edit.
func cloneClientRun(r clientRun) clientRun {
	c := clientRun{steps: map[string]*clientStep{}, done: slices.Clone(r.done), balance: r.balance, inbox: slices.Clone(r.inbox)}
	for k, s := range r.steps {
		cp := *s
		c.steps[k] = &cp
	}
	return c
}

// readClientSpec reads the spec at path and checks that its setup creates
// c's variant's MariaDB schema as it is now.
func readClientSpec(t *testing.T, path string, c clientCase) isoSpec {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec := parseSpec(t, path, string(text))
	for _, st := range c.variant.MariaDB.Schema {
		if !strings.Contains(collapse(spec.setup), collapse(st)) {
			t.Errorf("%s: its setup does not create %s's MariaDB schema: %s", path, c.variant.Name, collapse(st))
		}
	}
	return spec
}

// clients runs mariadb client processes against the server a DSN names.
type clients struct {
	bin   string
	args  []string // how to reach the server: --socket or --host and --port, the user
	env   []string // the password, in MYSQL_PWD, not on the command line
	admin *sql.DB  // CREATE and DROP DATABASE, and the waiting check
	n     int
}

// newClients prepares to run bin against the server dsn names.
func newClients(bin, dsn string) (*clients, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	args := []string{"--no-defaults", "--user=" + cfg.User}
	switch cfg.Net {
	case "unix":
		args = append(args, "--socket="+cfg.Addr)
	default:
		host, port, _ := strings.Cut(cfg.Addr, ":")
		args = append(args, "--host="+host, "--port="+port, "--protocol=TCP")
	}
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	// One connection: the waiting check is one reader of the cache.
	admin.SetMaxOpenConns(1)
	return &clients{bin: bin, args: args, env: append(os.Environ(), "MYSQL_PWD="+cfg.Passwd), admin: admin}, nil
}

func (c *clients) close() { c.admin.Close() }

// run runs perm through two mariadb clients on a new database set up by
// spec, each session at level, and reads the state at the end with a
// third.
func (c *clients) run(t *testing.T, spec isoSpec, level labtest.Level, perm []string) clientRun {
	t.Helper()
	c.n++
	db := fmt.Sprintf("idemlab_clients_%d_%d", os.Getpid(), c.n)
	if _, err := c.admin.Exec("CREATE DATABASE " + db + " CHARACTER SET utf8mb4"); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := c.admin.Exec("DROP DATABASE IF EXISTS " + db); err != nil {
			t.Errorf("dropping %s: %v", db, err)
		}
	}()
	setup := exec.Command(c.bin, append(slices.Clone(c.args), "--database="+db, "--batch")...)
	setup.Env, setup.Stdin = c.env, strings.NewReader(spec.setup)
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("setting up %s with the mariadb client: %v\n%s", db, err, out)
	}
	sessions := map[string]*client{}
	for _, name := range []string{"A", "B"} {
		s, err := c.start(db, level)
		if err != nil {
			t.Fatalf("session %s: %v", name, err)
		}
		defer s.stop()
		sessions[name] = s
	}
	got := clientRun{steps: map[string]*clientStep{}}
	waiting := map[string]string{} // session → the step it waits in
	for i, name := range perm {
		if name == spec.check {
			continue
		}
		session := name[:1]
		other := map[string]string{"A": "B", "B": "A"}[session]
		if waiting[session] != "" {
			t.Fatalf("permutation %s: step %s of session %s, which still waits in %s", strings.Join(perm, " "), name, session, waiting[session])
		}
		step := &clientStep{sql: spec.sql[name]}
		got.steps[kitStep(name)] = step
		if err := sessions[session].send(i, step.sql); err != nil {
			t.Fatalf("sending %s: %v", name, err)
		}
		if c.await(t, sessions[session], sessions[other], i, step) {
			waiting[session] = kitStep(name)
		} else {
			step.epoch = i
			got.done = append(got.done, kitStep(name))
		}
		// A step may let a waiting one go on, and that one another: look
		// at the waiters until none got past its wait.
		for moved := true; moved; {
			moved = false
			for _, s := range []string{"A", "B"} {
				w := waiting[s]
				if w == "" {
					continue
				}
				other := map[string]string{"A": "B", "B": "A"}[s]
				if !c.await(t, sessions[s], sessions[other], i, got.steps[w]) {
					got.steps[w].epoch = i
					got.done = append(got.done, w)
					waiting[s] = ""
					moved = true
				}
			}
		}
	}
	for s, w := range waiting {
		if w != "" {
			t.Fatalf("permutation %s: session %s still waits in %s at the end", strings.Join(perm, " "), s, w)
		}
	}
	check, err := c.start(db, labtest.Level{Isolation: lab.ReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer check.stop()
	read := func(query string) []string {
		if err := check.send(len(perm), query); err != nil {
			t.Fatal(err)
		}
		r, err := check.result(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if r.err != "" {
			t.Fatalf("%s: %s", query, r.err)
		}
		return r.rows
	}
	if rows := read(spec.sql[spec.check]); len(rows) == 1 {
		got.balance = strings.Trim(rows[0], "()")
	}
	for _, row := range read("SELECT source, event_id, account_id, amount FROM inbox") {
		got.inbox = append(got.inbox, inboxRow(strings.Split(strings.Trim(row, "()"), ", ")...))
	}
	slices.Sort(got.inbox)
	return got
}

// inboxRow is one inbox row as both sides write it.
func inboxRow(f ...string) string {
	if len(f) != 4 {
		return strings.Join(f, " ")
	}
	return fmt.Sprintf("%s/%s %s %s", strings.Trim(f[0], "'"), strings.Trim(f[1], "'"), f[2], f[3])
}

// await waits until step, sent as the n-th of the permutation to session
// s, has ended, and records its result; or until the server shows s
// waiting for a lock that session other holds, and reports true.
func (c *clients) await(t *testing.T, s, other *client, n int, step *clientStep) bool {
	t.Helper()
	deadline := time.Now().Add(clientStuck)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), clientPoll)
		r, err := s.result(ctx)
		cancel()
		if err == nil {
			if r.n > n {
				t.Fatalf("session %d: the marker of step %d came back while step %d was awaited", s.id, r.n, n)
			}
			step.result, step.done = r.describe(step.sql), true
			return false
		}
		if err != context.DeadlineExceeded {
			t.Fatalf("reading session %d: %v", s.id, err)
		}
		var blocked bool
		if err := c.admin.QueryRow(`SELECT COUNT(*) > 0
			FROM information_schema.INNODB_TRX r
			JOIN information_schema.INNODB_LOCK_WAITS w ON w.requesting_trx_id = r.trx_id
			JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
			WHERE r.trx_mysql_thread_id = ? AND b.trx_mysql_thread_id = ?`, s.id, other.id).Scan(&blocked); err != nil {
			t.Fatalf("asking INNODB_TRX whether session %d waits: %v", s.id, err)
		}
		if blocked {
			step.waited = true
			return true
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %d: %q has been neither ended nor seen waiting for %v", s.id, step.sql, clientStuck)
		}
	}
}

// client is one mariadb process: a session.
type client struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	id      int64             // its CONNECTION_ID()
	results chan clientResult // each statement's, in order, as the markers come back
}

// clientResult is what the client printed for one statement: the lines
// before its marker, and what the marker said.
type clientResult struct {
	n     int      // the step's index, from the marker
	count int64    // ROW_COUNT() after it
	rows  []string // a SELECT's rows, each "(v1, v2)"
	err   string   // "error 1213 (40001): …", "" if none
}

// clientError is an error line of the mariadb client run with --force.
var clientError = regexp.MustCompile(`^ERROR (\d+) \((\w+)\)(?: at line \d+)?: (.*)$`)

// describe renders r as the kit's transcript renders a result.
func (r clientResult) describe(query string) string {
	switch op := strings.ToUpper(strings.Fields(query)[0]); {
	case r.err != "":
		return r.err
	case op == "SELECT" && len(r.rows) == 0:
		return "no row"
	case op == "SELECT" && len(r.rows) == 1:
		return r.rows[0]
	case op == "SELECT":
		return fmt.Sprintf("%d rows, first %s", len(r.rows), r.rows[0])
	case op == "INSERT" || op == "UPDATE" || op == "DELETE":
		if r.count == 1 {
			return "1 row"
		}
		return fmt.Sprintf("%d rows", r.count)
	}
	return "ok"
}

// start starts a mariadb client on database db, and sets its session as
// the kit's DSN sets a scheduled connection's: level, no lock wait or
// statement timeout, and innodb_snapshot_isolation as level says.
func (c *clients) start(db string, level labtest.Level) (*client, error) {
	cmd := exec.Command(c.bin, append(slices.Clone(c.args), "--database="+db,
		"--batch", "--unbuffered", "--force", "--skip-column-names")...)
	cmd.Env = c.env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Standard output and error on one pipe: an error line comes before
	// the marker of its statement, as the client writes them.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close()
	results := make(chan clientResult, 64)
	s := &client{cmd: cmd, in: in, results: results}
	go s.read(pr)
	si := map[bool]string{false: "OFF", true: "ON"}[level.SnapshotIsolation]
	settings := fmt.Sprintf("SET SESSION tx_isolation = '%s', innodb_lock_wait_timeout = 100000000, max_statement_time = 0, innodb_snapshot_isolation = %s",
		strings.ToUpper(strings.ReplaceAll(string(level.Isolation), " ", "-")), si)
	for i, st := range []string{settings, "SELECT CONNECTION_ID()"} {
		if err := s.send(-2+i, st); err != nil {
			s.stop()
			return nil, err
		}
		r, err := s.result(context.Background())
		if err != nil || r.err != "" {
			s.stop()
			return nil, fmt.Errorf("%s: %v %s", st, err, r.err)
		}
		if i == 1 && len(r.rows) == 1 {
			s.id, _ = strconv.ParseInt(strings.Trim(r.rows[0], "()"), 10, 64)
		}
	}
	if s.id == 0 {
		s.stop()
		return nil, fmt.Errorf("no CONNECTION_ID() from the client")
	}
	return s, nil
}

// send sends one statement, then the marker that says, once the client
// runs it, that the statement has ended and what it counted.
func (s *client) send(n int, statement string) error {
	_, err := fmt.Fprintf(s.in, "%s;\nSELECT 'idemlab-step', %d, ROW_COUNT();\n", statement, n)
	return err
}

// result returns the next statement's result, or ctx's error if none has
// come back by the time ctx ends.
func (s *client) result(ctx context.Context) (clientResult, error) {
	select {
	case r, ok := <-s.results:
		if !ok {
			return clientResult{}, io.ErrUnexpectedEOF
		}
		return r, nil
	case <-ctx.Done():
		return clientResult{}, ctx.Err()
	}
}

// read parses the client's output into results: a statement's rows (tab
// separated, one a line) or error, then its marker.
func (s *client) read(out io.ReadCloser) {
	defer out.Close()
	defer close(s.results)
	sc := bufio.NewScanner(out)
	var cur clientResult
	inEcho := false // the client echoes a failed statement between dashed lines
	for sc.Scan() {
		line := sc.Text()
		switch f := strings.Split(line, "\t"); {
		case line == "--------------":
			inEcho = !inEcho
		case inEcho || line == "":
		case len(f) == 3 && f[0] == "idemlab-step":
			cur.n, _ = strconv.Atoi(f[1])
			cur.count, _ = strconv.ParseInt(f[2], 10, 64)
			s.results <- cur
			cur = clientResult{}
		case clientError.MatchString(line):
			m := clientError.FindStringSubmatch(line)
			cur.err = fmt.Sprintf("error %s (%s): %s", m[1], m[2], m[3])
		default:
			cur.rows = append(cur.rows, "("+strings.Join(f, ", ")+")")
		}
	}
}

// stop ends the client's input, which ends the session, and waits for it.
func (s *client) stop() {
	s.in.Close()
	s.cmd.Wait()
}

// kitMariaDBError is an error result in the kit's transcript on MariaDB:
// the driver's *mysql.MySQLError, "Error 1213 (40001): …".
var kitMariaDBError = regexp.MustCompile(`^error: Error (\d+) \((\w+)\): (.*)$`)

// runKitMariaDB runs one permutation through the kit's engine (runPlan)
// and reads its transcript as the clients' output is read.
func runKitMariaDB(t *testing.T, c clientCase, srv *labtest.Server, level labtest.Level, perm []string, check string) (got clientRun) {
	t.Helper()
	lines, balance, inbox := runPlan(t, c.variant, c.sessions, nil, srv, level, kitSchedule(perm, check))
	got = clientRun{steps: map[string]*clientStep{}, balance: fmt.Sprint(balance)}
	for _, e := range inbox {
		got.inbox = append(got.inbox, inboxRow(e.Source, e.EventID, fmt.Sprint(e.AccountID), fmt.Sprint(e.Amount)))
	}
	slices.Sort(got.inbox)
	for _, l := range lines {
		name := fmt.Sprintf("%s%d", l.Session, l.Step)
		s := got.steps[name]
		if s == nil {
			s = &clientStep{sql: collapse(l.Text)}
			got.steps[name] = s
		}
		if l.Result == "<waiting>" {
			s.waited = true
			continue
		}
		res := strings.TrimPrefix(l.Result, "-> ")
		if m := kitMariaDBError.FindStringSubmatch(res); m != nil {
			res = fmt.Sprintf("error %s (%s): %s", m[1], m[2], m[3])
		}
		s.result, s.done = res, true
		got.done = append(got.done, name)
	}
	return got
}

// compareClientRuns lists where the kit's run of a permutation, ours,
// differs from the clients', theirs.
func compareClientRuns(perm []string, spec isoSpec, theirs, ours clientRun) []string {
	var diffs []string
	for _, name := range perm {
		if name == spec.check {
			continue
		}
		th, k := theirs.steps[kitStep(name)], ours.steps[kitStep(name)]
		switch {
		case th == nil || !th.done:
			diffs = append(diffs, name+": the clients did not end it")
			continue
		case k == nil || !k.done:
			diffs = append(diffs, name+": the kit did not end it")
			continue
		}
		if th.sql != spec.sql[name] || k.sql != th.sql {
			diffs = append(diffs, fmt.Sprintf("%s: statements differ: spec %q, kit %q", name, th.sql, k.sql))
		}
		if th.waited != k.waited {
			diffs = append(diffs, fmt.Sprintf("%s: waited: clients %v, kit %v", name, th.waited, k.waited))
		}
		if th.result != k.result {
			diffs = append(diffs, fmt.Sprintf("%s: result: clients %q, kit %q", name, th.result, k.result))
		}
	}
	// The kit's transcript lists steps as they ended; the clients say
	// during which step of the permutation each ended. The kit's order
	// must go through those steps in order (within one, any order: a
	// deadlock's victim and the waiter it frees end together).
	last := -1
	for _, name := range ours.done {
		th := theirs.steps[name]
		if th == nil {
			continue
		}
		if th.epoch < last {
			diffs = append(diffs, fmt.Sprintf("order of ending: the kit ended %s after a step the clients ended during step %d, and the clients ended %s during step %d (clients %v, kit %v)",
				name, last+1, name, th.epoch+1, theirs.done, ours.done))
			break
		}
		last = th.epoch
	}
	if theirs.balance != ours.balance {
		diffs = append(diffs, fmt.Sprintf("balance: clients %s, kit %s", theirs.balance, ours.balance))
	}
	if !slices.Equal(theirs.inbox, ours.inbox) {
		diffs = append(diffs, fmt.Sprintf("inbox: clients %q, kit %q", theirs.inbox, ours.inbox))
	}
	// The kit ran no step the permutation does not name.
	for name := range ours.steps {
		if !slices.ContainsFunc(perm, func(p string) bool { return kitStep(p) == name }) {
			diffs = append(diffs, name+": the kit ran it, the permutation does not name it")
		}
	}
	return diffs
}

// clientSummary is one permutation in a line: who waited, who failed with
// which error number, the balance.
func clientSummary(r clientRun) string {
	var waited, errs []string
	for _, name := range r.done {
		s := r.steps[name]
		if s.waited {
			waited = append(waited, name)
		}
		if n, _, ok := strings.Cut(strings.TrimPrefix(s.result, "error "), " "); ok && strings.HasPrefix(s.result, "error ") {
			errs = append(errs, name+" "+n)
		}
	}
	return fmt.Sprintf("waited %v, errors %v, balance %s", waited, errs, r.balance)
}
