package labtest

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
)

// failsAfterCommit is correct/, except that it answers an error after its
// COMMIT: the lab finds on its own that a failed delivery changed the
// database, inside the scenario's call to Deliver.
var failsAfterCommit = lab.Variant{Name: "fails-after-commit", Schema: correct.Schema, DSN: correct.DSN,
	New: func(db *sql.DB) lab.Processor { return afterCommit{correct.New(db)} }}

type afterCommit struct{ p lab.Processor }

func (h afterCommit) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if _, err := h.p.Process(ctx, e); err != nil {
		return 0, err
	}
	return 0, errors.New("the answer was lost")
}

// creditsTwice is correct/, except that it credits an applied event a
// second time, after its COMMIT: the lab finds on its own, when the run
// closes, that the balance moved by more than the inbox credits.
var creditsTwice = lab.Variant{Name: "credits-twice", Schema: correct.Schema, DSN: correct.DSN,
	New: func(db *sql.DB) lab.Processor { return twice{correct.New(db), db} }}

type twice struct {
	p  lab.Processor
	db *sql.DB
}

func (h twice) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	o, err := h.p.Process(ctx, e)
	if err == nil && o == lab.Applied {
		_, err = h.db.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID)
	}
	return o, err
}

// TestByLab requires a cell to tell, failure by failure, what the lab
// found on its own from what the scenario asserted: a scenario that
// asserts nothing and a scenario that asserts a wrong balance, each alone,
// in a Case and among Interleavings, on correct/ and on handlers whose
// mistakes the lab finds during a delivery (failsAfterCommit) and when the
// run closes (creditsTwice).
// Exercise 11's check (Asserts) reads it to want a scenario that says
// itself what broke.
func TestByLab(t *testing.T) {
	e1 := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	e2 := lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 700}
	silent := func(r *Run) { r.Open().Deliver(e1) }
	asserting := func(r *Run) {
		db := r.Open()
		db.Deliver(e1)
		r.WantBalance(db, 1, 499)
	}
	interleaved := func(want func(c *Run, db *DB)) func(r *Run) {
		return func(r *Run) {
			r.Interleavings([]Account{{ID: 1}}, [][]lab.Event{{e1}, {e2}}, func(c *Run, db *DB, _ []Answer) { want(c, db) })
		}
	}
	for _, tc := range []struct {
		name string
		v    lab.Variant
		run  func(r *Run)
		want []bool
	}{
		{"correct/silent", correct.Variant, silent, nil},
		{"correct/asserting", correct.Variant, asserting, []bool{false}},
		{"correct/case-asserting", correct.Variant, func(r *Run) { r.Case("one", asserting) }, []bool{false}},
		{"correct/interleaved-asserting", correct.Variant, interleaved(func(c *Run, db *DB) { c.WantBalance(db, 1, 1) }), []bool{false}},
		{"fails-after-commit/silent", failsAfterCommit, silent, []bool{true}},
		{"fails-after-commit/asserting", failsAfterCommit, asserting, []bool{true, false}},
		{"fails-after-commit/case-silent", failsAfterCommit, func(r *Run) { r.Case("one", silent) }, []bool{true}},
		{"fails-after-commit/case-asserting", failsAfterCommit, func(r *Run) { r.Case("one", asserting) }, []bool{true, false}},
		{"credits-twice/silent", creditsTwice, silent, []bool{true}},
		{"credits-twice/asserting", creditsTwice, asserting, []bool{false, true}},
		{"credits-twice/interleaved-silent", creditsTwice, interleaved(func(*Run, *DB) {}), []bool{true}},
		{"credits-twice/interleaved-asserting", creditsTwice, interleaved(func(c *Run, db *DB) { c.WantBalance(db, 1, 1) }), []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cell := RunCell(t, Scenario{Name: tc.name, Run: tc.run}, tc.v)
			if len(cell.ByLab) != len(cell.Failures) || !slices.Equal(cell.ByLab, tc.want) {
				t.Errorf("RunCell(%s).ByLab = %v, want %v; the failures:\n%q", tc.name, cell.ByLab, tc.want, cell.Failures)
			}
		})
	}
}
