package scenarios_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/naive/checkthenacttx"
	"idemlab/naive/forupdate"
)

// The cross-check with PostgreSQL's own isolation tester. Each spec in
// testdata/isolation names, as permutations, schedules that the kit's race
// scenarios run; its steps are the statements the kit's handler sends at
// those steps, literally. TestIsolationTester runs every spec through
// Debian's isolationtester, on a database of its own at each isolation
// level the spec is for, and runs every permutation through the kit's
// engine too, with labtest.Plan. For every step they must agree on whether
// it waited, whether it failed and with which message, and what a SELECT
// returned; and at the end on the account's balance. If they disagree, the
// kit is wrong until shown otherwise.

// isolationTester is where Debian's postgresql-client-15 installs it.
const isolationTester = "/usr/lib/postgresql/15/lib/pgxs/src/test/isolation/isolationtester"

// isoCase is one spec: the kit's scenario, variant and deliveries it
// stands for, and the levels it is run at.
type isoCase struct {
	spec     string
	scenario string // the scenario whose schedules the permutations are
	variant  lab.Variant
	levels   []lab.Isolation
	sessions [][]lab.Event
	faults   []labtest.Fault
}

var (
	rc    = []lab.Isolation{lab.ReadCommitted}
	rrSer = []lab.Isolation{lab.RepeatableRead, lab.Serializable}
	race  = [][]lab.Event{{isoCredit("evt-3", 500)}, {isoCredit("evt-3", 500)}} // scenarios.Race
	abort = [][]lab.Event{{isoCredit("evt-6", 500)}, {isoCredit("evt-6", 500)}} // scenarios.AbortRace
	dist  = [][]lab.Event{{isoCredit("evt-7", 500)}, {isoCredit("evt-8", 700)}} // scenarios.DistinctRace
	confl = [][]lab.Event{{isoCredit("evt-5", 500)}, {isoCredit("evt-5", 700)}} // scenarios.ConflictRace
	// AbortRace's fault: A's COMMIT fails, and the driver rolls back.
	abortFault = labtest.Fault{When: labtest.Before, Op: labtest.OpCommit, Session: "A", Persistent: true}
)

var isoCases = []isoCase{
	{"correct-race-rc", "Race", correct.Variant, rc, race, nil},
	{"correct-race-rr", "Race", correct.Variant, rrSer, race, nil},
	{"correct-abort", "AbortRace", correct.Variant, lab.Isolations, abort, []labtest.Fault{abortFault}},
	{"correct-distinct-rc", "DistinctRace", correct.Variant, rc, dist, nil},
	{"correct-distinct-rr", "DistinctRace", correct.Variant, rrSer, dist, nil},
	{"correct-conflict-rc", "ConflictRace", correct.Variant, rc, confl, nil},
	{"correct-conflict-rr", "ConflictRace", correct.Variant, rrSer, confl, nil},
	{"checkthenacttx-race-rc", "Race", checkthenacttx.Variant, rc, race, nil},
	{"checkthenacttx-race-rr", "Race", checkthenacttx.Variant, rrSer, race, nil},
	{"forupdate-race-rc", "Race", forupdate.Variant, rc, race, nil},
	{"forupdate-race-rr", "Race", forupdate.Variant, rrSer, race, nil},
}

// isoCredit is the scenarios' credit: account 1, source provider-a.
func isoCredit(id string, amount int64) lab.Event {
	return lab.Event{Source: "provider-a", EventID: id, AccountID: 1, Amount: amount}
}

// isoStep is what one side saw of one step of a permutation.
type isoStep struct {
	sql    string   // the statement, whitespace collapsed, no trailing ;
	waited bool     // it waited for another session's lock
	err    string   // the error's primary message, "" if none
	code   string   // its SQLSTATE (the kit's side only: isolationtester does not print it)
	rows   []string // a SELECT's rows, each "(v1, v2)"; nil for other statements
	ran    bool
}

// isoRun is one permutation as one side ran it: its steps by kit step name
// ("B3"), in order, and the balance of account 1 at the end.
type isoRun struct {
	order   []string
	done    []string // the steps in the order they completed (kit names)
	steps   map[string]*isoStep
	balance string
}

func TestIsolationTester(t *testing.T) {
	srv := labtest.NeedPostgres(t)
	if _, err := os.Stat(isolationTester); err != nil {
		t.Fatalf("PostgreSQL's isolationtester: %v (Debian ships it in postgresql-client-15)", err)
	}
	admin, err := sql.Open("pgx", os.Getenv(report.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	conninfo, err := libpqConninfo(os.Getenv(report.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var agreed []string
	for _, c := range isoCases {
		path := filepath.Join("testdata", "isolation", c.spec+".spec")
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		spec := parseSpec(t, path, string(text))
		if !strings.Contains(collapse(spec.setup), collapse(c.variant.Postgres.Schema)) {
			t.Errorf("%s: its setup does not create %s's PostgreSQL schema", path, c.variant.Name)
		}
		for _, level := range c.levels {
			t.Run(c.spec+"/"+levelSlug(level), func(t *testing.T) {
				theirs := runIsolationTester(t, admin, conninfo, path, level)
				if len(theirs) != len(spec.perms) {
					t.Fatalf("isolationtester ran %d permutations, the spec has %d", len(theirs), len(spec.perms))
				}
				for i, perm := range spec.perms {
					ours := runKit(t, c, srv, level, perm, spec.check)
					if diffs := compareRuns(perm, spec, theirs[i], ours); len(diffs) > 0 {
						t.Errorf("%s at %s, permutation %s: the kit and isolationtester disagree:\n\t%s",
							path, level, strings.Join(perm, " "), strings.Join(diffs, "\n\t"))
						continue
					}
					agreed = append(agreed, fmt.Sprintf("%-24s %-16s %-55s %s", c.spec, level, kitSchedule(perm, spec.check), summary(ours)))
				}
			})
		}
	}
	t.Logf("isolationtester and the kit agree on %d permutations (%v):\n%s", len(agreed), time.Since(start).Round(time.Millisecond), strings.Join(agreed, "\n"))
}

// isoSpec is what the test reads of a spec: its setup, the statement of
// each step, and the permutations.
type isoSpec struct {
	setup string
	sql   map[string]string // step name → statement
	perms [][]string
	check string // the observer's step, last in every permutation
}

var (
	specStep  = regexp.MustCompile(`^step\s+(\S+)\s*\{\s*(.*?)\s*\}\s*$`)
	specSetup = regexp.MustCompile(`(?ms)^setup\s*\{(.*?)\n\}`)
)

func parseSpec(t *testing.T, path, text string) isoSpec {
	t.Helper()
	s := isoSpec{sql: map[string]string{}, check: "balance"}
	if m := specSetup.FindStringSubmatch(text); m != nil {
		s.setup = m[1]
	}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if m := specStep.FindStringSubmatch(line); m != nil {
			s.sql[m[1]] = collapse(m[2])
		}
		if rest, ok := strings.CutPrefix(line, "permutation "); ok {
			perm := strings.Fields(rest)
			if perm[len(perm)-1] != s.check {
				t.Fatalf("%s: permutation %q does not end with %s", path, rest, s.check)
			}
			s.perms = append(s.perms, perm)
		}
	}
	if s.setup == "" || len(s.perms) == 0 {
		t.Fatalf("%s: no setup or no permutation", path)
	}
	return s
}

// kitStep is the kit's name of a spec's step: B3_rollback is B3.
func kitStep(name string) string { n, _, _ := strings.Cut(name, "_"); return n }

// kitSchedule is the kit's schedule for a permutation, without the
// observer's step.
func kitSchedule(perm []string, check string) string {
	var steps []string
	for _, p := range perm {
		if p != check {
			steps = append(steps, kitStep(p))
		}
	}
	return strings.Join(steps, " ")
}

// collapse trims s, drops a trailing semicolon and collapses whitespace.
func collapse(s string) string {
	return strings.TrimSuffix(strings.Join(strings.Fields(s), " "), ";")
}

// libpqConninfo turns the lab's pgx connection string into libpq keywords
// for isolationtester, without a database: the test names its own.
func libpqConninfo(dsn string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", err
	}
	kv := fmt.Sprintf("host=%s port=%d", cfg.Host, cfg.Port)
	if cfg.User != "" {
		kv += " user=" + cfg.User
	}
	if cfg.Password != "" {
		kv += " password='" + strings.ReplaceAll(cfg.Password, "'", `\'`) + "'"
	}
	return kv, nil
}

// runIsolationTester runs the spec at path through isolationtester on a new
// database whose default_transaction_isolation is level, and returns what it
// printed of each permutation.
func runIsolationTester(t *testing.T, admin *sql.DB, conninfo, path string, level lab.Isolation) []isoRun {
	t.Helper()
	name := fmt.Sprintf("idemlab_iso_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000_000)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := admin.Exec("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("dropping %s: %v", name, err)
		}
	}()
	// The kit's DSN gives every connection the level; here the database does.
	if _, err := admin.Exec(fmt.Sprintf("ALTER DATABASE %s SET default_transaction_isolation = '%s'", name, level)); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, isolationTester, conninfo+" dbname="+name)
	cmd.Stdin = in
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("isolationtester %s: %v\n%s", path, err, out)
	}
	return parseIsolationOutput(t, string(out))
}

var (
	itStep  = regexp.MustCompile(`^step (\S+): (.*)$`)
	itRows  = regexp.MustCompile(`^\((\d+) rows?\)$`)
	itError = regexp.MustCompile(`^(ERROR|FATAL):  (.*)$`)
)

// parseIsolationOutput reads isolationtester's output: for each
// permutation, each step's statement, whether it printed <waiting ...>,
// the error that followed it or its <... completed>, and a SELECT's rows.
func parseIsolationOutput(t *testing.T, out string) []isoRun {
	t.Helper()
	var runs []isoRun
	var cur *isoRun
	var last *isoStep
	sc := bufio.NewScanner(strings.NewReader(out))
	var table []string // the lines of a result table being read
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "starting permutation: "):
			runs = append(runs, isoRun{steps: map[string]*isoStep{}})
			cur, last, table = &runs[len(runs)-1], nil, nil
		case cur == nil:
		case itStep.MatchString(line):
			m := itStep.FindStringSubmatch(line)
			name := m[1]
			if m[2] == "<... completed>" {
				last = cur.steps[name]
				if last == nil {
					t.Fatalf("isolationtester: %s completed before it ran:\n%s", name, out)
				}
				cur.done = append(cur.done, kitStep(name))
				continue
			}
			stmt, waiting := strings.CutSuffix(m[2], " <waiting ...>")
			last = &isoStep{sql: collapse(stmt), waited: waiting, ran: true}
			cur.steps[name] = last
			cur.order = append(cur.order, name)
			if !waiting && name != "balance" {
				cur.done = append(cur.done, kitStep(name))
			}
			table = nil
		case itError.MatchString(line):
			if last == nil {
				t.Fatalf("isolationtester: an error before any step:\n%s", out)
			}
			last.err = itError.FindStringSubmatch(line)[2]
		case itRows.MatchString(line):
			// table: header, dashes, rows.
			last.rows = []string{}
			if len(table) >= 2 {
				for _, r := range table[2:] {
					var vals []string
					for _, v := range strings.Split(r, "|") {
						vals = append(vals, strings.TrimSpace(v))
					}
					last.rows = append(last.rows, "("+strings.Join(vals, ", ")+")")
				}
			}
			table = nil
		case line != "" && last != nil:
			table = append(table, line)
		}
	}
	for i := range runs {
		if s := runs[i].steps["balance"]; s != nil && len(s.rows) == 1 {
			runs[i].balance = strings.Trim(s.rows[0], "()")
		}
	}
	return runs
}

var kitError = regexp.MustCompile(`^error: ERROR: (.*) \(SQLSTATE (\w+)\)$`)

// runKit runs one permutation through the kit's engine (runPlan) and
// reads its transcript as isolationtester's output is read.
func runKit(t *testing.T, c isoCase, srv *labtest.Server, level lab.Isolation, perm []string, check string) (got isoRun) {
	t.Helper()
	lines, balance, _ := runPlan(t, c.variant, c.sessions, c.faults, srv, labtest.Level{Isolation: level}, kitSchedule(perm, check))
	got = isoRun{steps: map[string]*isoStep{}, balance: fmt.Sprint(balance)}
	for _, l := range lines {
		name := fmt.Sprintf("%s%d", l.Session, l.Step)
		s := got.steps[name]
		if s == nil {
			s = &isoStep{sql: collapse(l.Text), ran: true}
			got.steps[name] = s
			got.order = append(got.order, name)
		}
		if l.Result == "<waiting>" {
			s.waited = true
			continue
		}
		got.done = append(got.done, name)
		res := strings.TrimPrefix(l.Result, "-> ")
		switch {
		case kitError.MatchString(res):
			m := kitError.FindStringSubmatch(res)
			s.err, s.code = m[1], m[2]
		case strings.HasPrefix(res, "not run: injected fault") && s.sql == "COMMIT":
			// The driver rolls the transaction back for real.
			s.sql, s.code = "ROLLBACK", "injected"
		case strings.HasPrefix(res, "error: "):
			s.err = strings.TrimPrefix(res, "error: ")
		case res == "no row":
			s.rows = []string{}
		case strings.HasPrefix(res, "("):
			s.rows = []string{res}
		case strings.Contains(res, " rows, first "):
			s.rows = []string{"more than one: " + res}
		}
	}
	return got
}

// runPlan runs plan, a permutation without its observer's step, through
// the kit's engine: a run of v at level on srv, a fresh database, faults,
// and labtest.Plan. It returns the transcript's lines of the sessions'
// statements, in the order they ended (a statement that waited has a
// "<waiting>" line first), and the balance of account 1 and the inbox at
// the end. The kit's runs of TestIsolationTester and TestMariaDBClients.
func runPlan(t *testing.T, v lab.Variant, sessions [][]lab.Event, faults []labtest.Fault, srv *labtest.Server,
	level labtest.Level, plan string) (lines []report.Line, balance int64, inbox []lab.Event) {
	t.Helper()
	r := labtest.NewServerRun(t, v, srv, level)
	defer r.Close()
	db := r.OpenScheduled()
	for _, f := range faults {
		db.Inject(f)
	}
	var schedule string
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("the kit cannot follow %s: %v", plan, p)
			}
		}()
		_, schedule = db.Interleave(labtest.Plan(plan), sessions...)
	}()
	if schedule != plan {
		t.Errorf("the kit ran %s, the permutation is %s", schedule, plan)
	}
	for _, l := range r.Transcript.Lines() {
		if l.Step != 0 {
			lines = append(lines, l)
		}
	}
	_, inbox = db.State()
	return lines, db.Balance(1), inbox
}

// compareRuns lists where the two sides differ on a permutation.
func compareRuns(perm []string, spec isoSpec, theirs, ours isoRun) []string {
	var diffs []string
	for _, name := range perm {
		if name == spec.check {
			continue
		}
		th, k := theirs.steps[name], ours.steps[kitStep(name)]
		switch {
		case th == nil:
			diffs = append(diffs, name+": isolationtester did not run it")
			continue
		case k == nil:
			diffs = append(diffs, name+": the kit did not run it")
			continue
		}
		if th.sql != spec.sql[name] || k.sql != th.sql {
			diffs = append(diffs, fmt.Sprintf("%s: statements differ: spec %q, kit %q", name, th.sql, k.sql))
		}
		if th.waited != k.waited {
			diffs = append(diffs, fmt.Sprintf("%s: waited: isolationtester %v, kit %v", name, th.waited, k.waited))
		}
		if th.err != k.err {
			diffs = append(diffs, fmt.Sprintf("%s: error: isolationtester %q, kit %q", name, th.err, k.err))
		}
		if th.rows != nil && !slices.Equal(th.rows, k.rows) {
			diffs = append(diffs, fmt.Sprintf("%s: rows: isolationtester %v, kit %v", name, th.rows, k.rows))
		}
	}
	if !slices.Equal(theirs.done, ours.done) {
		diffs = append(diffs, fmt.Sprintf("order of completion: isolationtester %v, kit %v", theirs.done, ours.done))
	}
	if theirs.balance != ours.balance {
		diffs = append(diffs, fmt.Sprintf("balance: isolationtester %s, kit %s", theirs.balance, ours.balance))
	}
	// The kit ran no step the permutation does not name.
	for _, name := range ours.order {
		if !slices.ContainsFunc(perm, func(p string) bool { return kitStep(p) == name }) {
			diffs = append(diffs, name+": the kit ran it, the permutation does not name it")
		}
	}
	return diffs
}

// summary is one permutation in a line: who waited, who failed with which
// code, the balance.
func summary(r isoRun) string {
	var waited, errs []string
	for _, name := range r.order {
		s := r.steps[name]
		if s.waited {
			waited = append(waited, name)
		}
		if s.code != "" {
			errs = append(errs, name+" "+s.code)
		}
	}
	return fmt.Sprintf("waited %v, errors %v, balance %s", waited, errs, r.balance)
}
