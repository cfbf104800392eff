//go:build mutants

package scenarios_test

// Mutation testing of the matrix (mutants/REPORT.md). Built only with
// -tags mutants, on the mutants that TestMutationsFit -mutants.write
// (mutantgen_test.go) writes into mutants/_generated; .ci/mutants does both:
//
//	go test ./scenarios -run '^TestMutationsFit$' -count=1 -mutants.write
//	go test -tags mutants ./scenarios -run '^TestMutants$' -v -parallel 2
//
// MUTANTS=a,b limits the run to those mutants; MUTANTS_OUT=file appends one
// line per cell as it finishes.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/mutants/_generated/all"
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
	"nulleventid": "a STRICT table's PRIMARY KEY columns are NOT NULL already",
	"int32amount": "Validate bounds both amounts to 1..1e9 before the comparison, and an int32 holds them exactly",
}

// awaitingScenario are the mutants that are not equivalent and that no
// column kills yet, each with the check that would (mutants/REPORT.md).
// They do not fail TestMutants, so that it can run in CI, but they are
// logged; one that a column starts to kill fails it, to be moved out of
// this list. Emptying the list makes TestMutants strict.
var awaitingScenario = map[string]string{}

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
			t.Errorf("the test lists %s, which is not a mutant of scenarios/mutations_test.go", n)
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
