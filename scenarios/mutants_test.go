//go:build mutants

package scenarios_test

// Mutation testing of the matrix (mutants/REPORT.md). Built only with
// -tags mutants:
//
//	go test -tags mutants ./scenarios -run '^TestMutants$' -v -parallel 2
//
// MUTANTS=a,b limits the run to those mutants; MUTANTS_OUT=file appends one
// line per cell as it finishes.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/mutants/all"
	"idemlab/scenarios"
)

// equivalentMutants are the mutants that survive every column because they
// do what correct does, for every input (mutants/REPORT.md argues each).
// Any other survivor fails TestMutants: the matrix has lost strength, or a
// new mutant needs a scenario (or an argument here). A listed mutant that is
// killed fails it too: it was not equivalent, or the column is wrong.
var equivalentMutants = map[string]string{
	"nezero":      "RowsAffected of a one-row INSERT … DO NOTHING is 0 or 1",
	"rowsignored": "modernc's RowsAffected never returns an error",
	"notarget":    "inbox has one uniqueness constraint, the key, which is the target",
	"uniquekey":   "UNIQUE on NOT NULL columns conflicts exactly when the PRIMARY KEY did",
	"notxlock":    "a plain BEGIN whose first statement is the INSERT takes the write lock before it reads",
	"creditzero":  "WHERE id = ? on the rowid changes 0 or 1 rows, so n == 0 refuses what n != 1 refuses",
	"sourcenull":  "a STRICT table's PRIMARY KEY columns are NOT NULL already",
}

// awaitingScenario are the mutants that are not equivalent and that no
// column kills yet, each with the check that would (mutants/REPORT.md).
// They do not fail TestMutants, so that it can run in CI, but they are
// logged; one that a column starts to kill fails it, to be moved out of
// this list. Emptying the list makes TestMutants strict.
var awaitingScenario = map[string]string{}

// The crash child finds its variant in crashOnly.
func init() { crashOnly = all.Variants }

// mutantChecks are columns beyond the scenarios: the kit's own checks of
// correct that run outside the scheduler, applied to each mutant.
var mutantChecks = []struct {
	name string
	run  func(t *testing.T, v lab.Variant) (problems []string)
}{
	{"DSNPaths", func(t *testing.T, v lab.Variant) []string {
		problems, err := dsnPathProblems(t.TempDir, v)
		if err != nil {
			return []string{err.Error()}
		}
		return problems
	}},
	{"ForeignDSN", foreignDSNProblems},
	{"CancelDone", cancelDoneProblems},
}

// foreignDSNProblems opens v on its own DSN without foreign_keys(1), as a
// user who builds a DSN might (correct/library_test.go, TestWithoutForeignKeys),
// and delivers an event for a missing account: it must not be applied, and
// must leave nothing behind.
func foreignDSNProblems(t *testing.T, v lab.Variant) []string {
	c, err := sqlite.NewConnector(strings.Replace(v.DSN(filepath.Join(t.TempDir(), "ledger.db")), "_pragma=foreign_keys(1)&", "", 1))
	if err != nil {
		return []string{err.Error()}
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if _, err := db.Exec(v.Schema + `INSERT INTO accounts (id) VALUES (1);`); err != nil {
		return []string{err.Error()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 99, Amount: 500}
	var problems []string
	o, err := v.New(db).Process(ctx, e)
	if !errors.Is(err, lab.ErrUnknownAccount) {
		problems = append(problems, fmt.Sprintf("Process(%v) without foreign keys = %v, %v, want an error (unknown account)", e, o, err))
	}
	var rows int
	if err := db.QueryRow(`SELECT count(*) FROM inbox`).Scan(&rows); err != nil {
		return append(problems, err.Error())
	}
	if rows != 0 {
		problems = append(problems, fmt.Sprintf("inbox rows after Process(%v) = %d, want 0", e, rows))
	}
	return problems
}

// cancelDoneProblems delivers a new event whose caller gives up once the
// credit has run, and lets database/sql's own rollback of the cancelled
// transaction (Tx.awaitDone) mark it done before the handler commits: the
// race the issue saw in about 1 of 300 short-deadline deliveries, made
// certain. COMMIT then reports only sql.ErrTxDone; the answer must be busy,
// with nothing kept, and the redelivery applies (or, as Cancel allows, the
// success it earned: applied, kept, and the redelivery a duplicate). Cancel in the matrix
// cannot reach this: its handler always reaches COMMIT first. It runs in
// real time, outside the scheduler: the credit's RowsAffected, which
// database/sql calls under the connection's lock, cancels and waits 100 ms,
// in which awaitDone marks the transaction done and then queues for that
// lock.
func cancelDoneProblems(t *testing.T, v lab.Variant) []string {
	base, err := sqlite.NewConnector(v.DSN(filepath.Join(t.TempDir(), "ledger.db")))
	if err != nil {
		return []string{err.Error()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &cancelConnector{Connector: base}
	db := sql.OpenDB(c)
	defer db.Close()
	if _, err := db.Exec(v.Schema + `INSERT INTO accounts (id) VALUES (1);`); err != nil {
		return []string{err.Error()}
	}
	c.on = func() {
		c.on = nil
		cancel()
		time.Sleep(100 * time.Millisecond)
	}
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	h := v.New(db)
	o, err := h.Process(ctx, e)
	if c.on != nil {
		return nil // no credit's RowsAffected: the other columns judge it
	}
	// database/sql's rollback ends on its own goroutine: let it finish, so
	// that the redelivery does not meet its lock.
	for i := 0; i < 200 && db.Stats().InUse > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	var rows, balance int64
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM inbox), (SELECT balance FROM accounts WHERE id = 1)`).Scan(&rows, &balance); err != nil {
		return []string{err.Error()}
	}
	// As in Cancel: busy with nothing kept, or the success it earned.
	var problems []string
	want := lab.Applied
	switch {
	case err == nil && o == lab.Applied && rows == 1 && balance == e.Amount:
		want = lab.Duplicate
	case errors.Is(err, lab.ErrBusy) && rows == 0 && balance == 0:
	default:
		problems = append(problems, fmt.Sprintf("Process(%v) = %v, %v after its caller cancelled and database/sql rolled back, with %d inbox rows and balance %d kept; want busy with nothing kept, or applied with both kept",
			e, o, err, rows, balance))
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	if o, err := h.Process(ctx2, e); o != want || err != nil {
		problems = append(problems, fmt.Sprintf("redelivery Process(%v) = %v, %v, want %v", e, o, err, want))
	}
	return problems
}

// cancelConnector calls on, once set, when the handler reads RowsAffected
// of its credit (an UPDATE of accounts).
type cancelConnector struct {
	driver.Connector
	on func()
}

func (c *cancelConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelConn{Conn: cn, c: c}, nil
}

type cancelConn struct {
	driver.Conn
	c *cancelConnector
}

func (c *cancelConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *cancelConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
	if err == nil && strings.Contains(q, "UPDATE accounts") {
		return cancelResult{Result: r, c: c.c}, nil
	}
	return r, err
}

func (c *cancelConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (c *cancelConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

type cancelResult struct {
	driver.Result
	c *cancelConnector
}

func (r cancelResult) RowsAffected() (int64, error) {
	if r.c.on != nil {
		r.c.on()
	}
	return r.Result.RowsAffected()
}

func TestMutants(t *testing.T) {
	// The columns beyond the scenarios hold correct to their standard.
	for _, c := range mutantChecks {
		if problems := c.run(t, correct.Variant); len(problems) > 0 {
			t.Fatalf("column %s rejects correct: %s", c.name, strings.Join(problems, "; "))
		}
	}
	only := map[string]bool{}
	if s := os.Getenv("MUTANTS"); s != "" {
		for _, n := range strings.Split(s, ",") {
			only["mutants/"+n] = true
		}
	}
	var run []lab.Variant
	for _, v := range all.Variants {
		if len(only) == 0 || only[v.Name] {
			run = append(run, v)
		}
	}
	if len(run) == 0 {
		t.Fatalf("MUTANTS=%s names no mutant", os.Getenv("MUTANTS"))
	}
	for n := range maps.Keys(equivalentMutants) {
		if _, ok := awaitingScenario[n]; ok {
			t.Errorf("%s is listed both as equivalent and as awaiting a scenario", n)
		}
	}
	for _, n := range slices.Concat(slices.Collect(maps.Keys(equivalentMutants)), slices.Collect(maps.Keys(awaitingScenario))) {
		if !slices.ContainsFunc(all.Variants, func(v lab.Variant) bool { return v.Name == "mutants/"+n }) {
			t.Errorf("the test lists %s, which is not a mutant of mutants/gen/mutations.go", n)
		}
	}
	var out *os.File
	if p := os.Getenv("MUTANTS_OUT"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	var mu sync.Mutex
	killed := map[string][]string{}
	record := func(v lab.Variant, column string, pass bool, detail string) {
		mu.Lock()
		defer mu.Unlock()
		verdict := "survives"
		if !pass {
			verdict = "KILLS"
			killed[v.Name] = append(killed[v.Name], column)
		}
		if out != nil {
			fmt.Fprintf(out, "%s\t%s\t%s\t%s\n", v.Name, column, verdict, strings.ReplaceAll(detail, "\n", " "))
		}
	}
	t.Run("cells", func(t *testing.T) {
		for _, v := range run {
			for _, sc := range scenarios.All {
				if sc.Limit != "" {
					continue
				}
				t.Run(sc.Name+"/"+v.Name, func(t *testing.T) {
					t.Parallel()
					cell := labtest.RunCell(t, sc, v)
					record(v, sc.Name, cell.Pass, cell.Detail)
				})
			}
			for _, c := range mutantChecks {
				t.Run(c.name+"/"+v.Name, func(t *testing.T) {
					t.Parallel()
					problems := c.run(t, v)
					record(v, c.name, len(problems) == 0, strings.Join(problems, "; "))
				})
			}
		}
	})
	var survivors []string
	for _, v := range run {
		k := killed[v.Name]
		slices.Sort(k)
		name := strings.TrimPrefix(v.Name, "mutants/")
		t.Logf("%-26s %s", name, strings.Join(k, " "))
		why, equivalent := equivalentMutants[name]
		gap, awaiting := awaitingScenario[name]
		switch {
		case len(k) == 0 && awaiting:
			t.Logf("%s survives, awaiting a scenario: %s", name, gap)
		case len(k) > 0 && awaiting:
			t.Errorf("%s is listed in awaitingScenario but %s killed it: move it out of the list (and update mutants/REPORT.md)", name, strings.Join(k, " "))
		case len(k) == 0 && !equivalent:
			survivors = append(survivors, name)
			t.Errorf("%s (%s) survives every column and is not listed as equivalent: the matrix has lost strength, or it needs a scenario (or an argument in equivalentMutants and mutants/REPORT.md)", name, v.Mistake)
		case len(k) > 0 && equivalent:
			t.Errorf("%s is listed as equivalent (%s) but %s killed it: it is not equivalent, or the column rejects a correct handler", name, why, strings.Join(k, " "))
		}
	}
	t.Logf("killed %d of %d; equivalent survivors %v; awaiting a scenario %v; unexplained survivors %v",
		len(killed), len(run), slices.Sorted(maps.Keys(equivalentMutants)), slices.Sorted(maps.Keys(awaitingScenario)), survivors)
}
