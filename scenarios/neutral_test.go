package scenarios_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/naive/serialasduplicate"
	"idemlab/scenarios"
)

// The handlers below are the wrong implementations the neutral verdict
// must be held against: handlers the scenarios' faults miss. Each is
// correct's pattern (the inbox row and the credit in one BEGIN IMMEDIATE
// transaction), written so that a statement a scenario strikes is not
// there, or its arguments are not what the scenario rewrites.

// triggerSchema is correct's schema with the credit moved into a trigger
// on the inbox: INSERT INTO inbox credits the account in the same
// statement, so the handler runs no UPDATE of accounts, and a fault
// "before the UPDATE of accounts" never fires. by is how many times the
// trigger adds the amount: 1 is right, 2 a handler that breaks the
// ledger's invariant.
func triggerSchema(by int) string {
	return correct.Schema + fmt.Sprintf(`
CREATE TRIGGER credit_on_inbox AFTER INSERT ON inbox BEGIN
	UPDATE accounts SET balance = balance + %d * NEW.amount WHERE id = NEW.account_id;
END;
`, by)
}

// stagedSchema writes the inbox row through a table of its own: the
// handler inserts into staged, whose trigger copies the row into inbox
// and credits the account. The handler runs no INSERT into inbox, so the
// lab cannot stall it there (HoldDelivery).
const stagedSchema = correct.Schema + `
CREATE TABLE staged (
	source     TEXT    NOT NULL,
	event_id   TEXT    NOT NULL,
	account_id INTEGER NOT NULL,
	amount     INTEGER NOT NULL
) STRICT;

CREATE TRIGGER stage AFTER INSERT ON staged BEGIN
	INSERT INTO inbox (source, event_id, account_id, amount)
	VALUES (NEW.source, NEW.event_id, NEW.account_id, NEW.amount);
	UPDATE accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id;
END;
`

// insertOnly is a handler whose one write is its INSERT: into inbox, with
// the credit left to the schema's trigger, or into staged. args binds the
// event's values; compare, when set, tells a repeat from a conflict (nil:
// every known key is a duplicate, naive/idonly's mistake).
type insertOnly struct {
	db      *sql.DB
	table   string
	args    func(e lab.Event) []any
	compare bool
	noCtx   bool // BEGIN without the caller's context, as mutants/begin does
}

// Process applies e with one INSERT, inside a transaction.
func (h *insertOnly) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	begin := func() (*sql.Tx, error) { return h.db.BeginTx(ctx, nil) }
	if h.noCtx {
		begin = h.db.Begin
	}
	tx, err := begin()
	if err != nil {
		return 0, classifyIn(ctx, err)
	}
	defer tx.Rollback()
	seen := func() (bool, error) {
		var account, amount int64
		err := tx.QueryRowContext(ctx, `SELECT account_id, amount FROM inbox WHERE source = $1 AND event_id = $2`,
			e.Source, e.EventID).Scan(&account, &amount)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return false, nil
		case err != nil:
			return false, classifyIn(ctx, err)
		case h.compare && (account != e.AccountID || amount != e.Amount):
			return true, fmt.Errorf("%w: %s was applied with account=%d amount=%d", lab.ErrPayloadConflict, e.Key(), account, amount)
		}
		return true, nil
	}
	if dup, err := seen(); err != nil || dup {
		if err != nil {
			return 0, err
		}
		if err := tx.Commit(); err != nil {
			return 0, classifyIn(ctx, err)
		}
		return lab.Duplicate, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+h.table+` (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`,
		h.args(e)...); err != nil {
		return 0, classifyIn(ctx, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, classifyIn(ctx, err)
	}
	return lab.Applied, nil
}

// classifyIn is correct's classify: lab.Classify, after asking the
// caller's context, so that a statement cut short by a caller who gave up
// is busy.
func classifyIn(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return lab.Classify(err)
}

// asInt64 binds the event's values as correct does; asStrings binds the
// amount as a decimal string, which SQLite's STRICT table stores as the
// integer it converts to, and which a rewrite looking for int64(500) does
// not recognise.
func asInt64(e lab.Event) []any { return []any{e.Source, e.EventID, e.AccountID, e.Amount} }
func asStrings(e lab.Event) []any {
	return []any{e.Source, e.EventID, e.AccountID, strconv.FormatInt(e.Amount, 10)}
}

// variantOf is a test variant: correct's DSN, schema, and a handler that
// writes with one INSERT into table.
func variantOf(name, mistake, schema, table string, args func(lab.Event) []any, compare bool) lab.Variant {
	return lab.Variant{
		Name: name, Mistake: mistake, Schema: schema, DSN: correct.DSN,
		New: func(db *sql.DB) lab.Processor { return &insertOnly{db: db, table: table, args: args, compare: compare} },
	}
}

var (
	// trigger is right: it credits by a trigger.
	trigger = variantOf("test/trigger", "", triggerSchema(1), "inbox", asInt64, true)
	// triggerIDOnly credits by a trigger, and answers duplicate for a known
	// key without comparing the payload: wrong, where no fault is needed to
	// see it.
	triggerIDOnly = variantOf("test/triggeridonly", "a known key is a duplicate without comparing the payload",
		triggerSchema(1), "inbox", asInt64, false)
	// triggerTwice credits by a trigger that adds the amount twice.
	triggerTwice = variantOf("test/triggertwice", "the trigger credits twice", triggerSchema(2), "inbox", asInt64, true)
	// stringAmount is right, and binds the amount as a string.
	stringAmount = variantOf("test/stringamount", "", triggerSchema(1), "inbox", asStrings, true)
	// staged is right, and writes its inbox row through another table.
	staged = variantOf("test/staged", "", stagedSchema, "staged", asInt64, true)
	// noCtx credits by a trigger, and begins its transaction without the
	// caller's context, which the lab refuses at once: it never reaches
	// the INSERT.
	noCtx = func() lab.Variant {
		v := variantOf("test/noctx", "BEGIN without the caller's context", triggerSchema(1), "inbox", asInt64, true)
		v.New = func(db *sql.DB) lab.Processor {
			return &insertOnly{db: db, table: "inbox", args: asInt64, compare: true, noCtx: true}
		}
		return v
	}()
)

// wantNeutral fails t unless cell is neutral and its reason says want.
func wantNeutral(t *testing.T, what string, cell *report.Cell, want string) {
	t.Helper()
	if cell.Mark() != report.Neutral || !strings.Contains(cell.Neutral, want) || len(cell.Failures) != 0 {
		t.Errorf("%s = %s (%q, failures %q), want %s saying %q", what, cell.Mark(), cell.Detail, cell.Failures, report.Neutral, want)
	}
	if !strings.Contains(cell.Transcript, "CANNOT JUDGE: ") {
		t.Errorf("%s: the transcript does not say why it could not judge:\n%s", what, cell.Transcript)
	}
}

// wantMark fails t unless cell's verdict is want.
func wantMark(t *testing.T, what string, cell *report.Cell, want string) {
	t.Helper()
	if got := cell.Mark(); got != want {
		t.Errorf("%s = %s (%s), want %s", what, got, cell.Detail, want)
	}
}

const unfiredUpdate = "the fault 'before the UPDATE of accounts' never fired: the handler ran no such statement"

// TestNeutralTrigger holds the matrix's scenarios to a handler that credits
// by a trigger, and is right: where a scenario's fault strikes "the UPDATE
// of accounts", which it never runs, the cell is neutral, saying so — not
// ✗, which the scenario's expectations (an error, then applied on the
// retry) would have made it, and not ✓, which would claim the failure
// between the INSERT and the credit was survived. No scenario outside the
// limits of the pattern may fail it.
func TestNeutralTrigger(t *testing.T) {
	for _, name := range []string{"Rollback", "Summary"} {
		wantNeutral(t, "RunCell("+name+", trigger)", labtest.RunCell(t, scenarios.Named(scenarios.All, name), trigger), unfiredUpdate)
	}
	for _, sc := range scenarios.All {
		if sc.Limit != "" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			if cell := labtest.RunCell(t, sc, trigger); !cell.Pass {
				t.Errorf("RunCell(%s, a handler that credits by a trigger) = %s: %s", sc.Name, report.Fail, cell.Detail)
			}
		})
	}
	// Where the faults strike statements it does run, it is judged.
	for _, name := range []string{"Duplicate", "FaultSweep", "Crash", "Cancel", "DatabaseRefusal", "Race"} {
		wantMark(t, "RunCell("+name+", trigger)", labtest.RunCell(t, scenarios.Named(scenarios.All, name), trigger), report.Pass)
	}
}

// TestNeutralKeepsRealFailures holds the neutral verdict to what it may
// hide: nothing. A trigger handler that is wrong where no fault is needed
// to see it (a known key is a duplicate, whatever the payload) still fails
// PayloadConflict; one whose trigger credits twice breaks the ledger's
// invariant even in Rollback, whose fault it dodges; a failure the
// scenario found before it injected the fault that never fired stands;
// and a scenario of several cases fails when one case breaks a
// guarantee, whatever its other cases could not judge; and what the lab
// finds on its own (a call without the delivery's context) stands in a
// story whose fault never fired.
func TestNeutralKeepsRealFailures(t *testing.T) {
	wantMark(t, "RunCell(PayloadConflict, triggeridonly)", labtest.RunCell(t, scenarios.Named(scenarios.All, "PayloadConflict"), triggerIDOnly), report.Fail)
	wantNeutral(t, "RunCell(Rollback, triggeridonly)", labtest.RunCell(t, scenarios.Named(scenarios.All, "Rollback"), triggerIDOnly), unfiredUpdate)

	// The lab's own findings hold whatever the story: a handler that calls
	// the database without the delivery's context is refused at its BEGIN,
	// runs no UPDATE, and still fails Rollback for that.
	lost := labtest.RunCell(t, scenarios.Named(scenarios.All, "Rollback"), noCtx)
	wantMark(t, "RunCell(Rollback, noctx)", lost, report.Fail)
	if !strings.Contains(strings.Join(lost.Failures, "\n"), "without the delivery's context") {
		t.Errorf("RunCell(Rollback, noctx).Failures = %q, want the call without the delivery's context", lost.Failures)
	}

	twice := labtest.RunCell(t, scenarios.Named(scenarios.All, "Rollback"), triggerTwice)
	wantMark(t, "RunCell(Rollback, triggertwice)", twice, report.Fail)
	if !strings.Contains(strings.Join(twice.Failures, "\n"), "balance moved by 1000, want 500") {
		t.Errorf("RunCell(Rollback, triggertwice).Failures = %q, want the broken invariant", twice.Failures)
	}

	before := labtest.Scenario{Name: "FailureBeforeTheFault", Run: func(r *labtest.Run) {
		db := r.Open()
		r.WantOutcome(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}), lab.Duplicate)
		db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpUpdate, Table: "accounts"})
		r.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 500}), labtest.ErrInjected)
	}}
	cell := labtest.RunCell(t, before, trigger)
	if cell.Pass || len(cell.Failures) != 1 || !strings.Contains(cell.Failures[0], "want duplicate") {
		t.Errorf("RunCell(a failure, then a fault that never fires) = pass %v, %q; want the first failure alone", cell.Pass, cell.Failures)
	}

	cases := labtest.Scenario{Name: "TwoCases", Run: func(r *labtest.Run) {
		r.Case("a fault before the credit", func(c *labtest.Run) {
			db := c.Open()
			db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpUpdate, Table: "accounts"})
			c.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}), labtest.ErrInjected)
		})
		r.Case("a repeat with another amount", func(c *labtest.Run) {
			db := c.Open()
			c.WantOutcome(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}), lab.Applied)
			c.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 700}), lab.ErrPayloadConflict)
		})
	}}
	wantMark(t, "RunCell(TwoCases, triggeridonly)", labtest.RunCell(t, cases, triggerIDOnly), report.Fail)
	held := labtest.RunCell(t, cases, trigger)
	wantMark(t, "RunCell(TwoCases, trigger)", held, report.Pass)
	if want := "1 of 2 cases could not judge the handler; the first, case a fault before the credit: " + unfiredUpdate; !strings.Contains(held.Detail, want) {
		t.Errorf("RunCell(TwoCases, trigger).Detail = %q, want it to say %q", held.Detail, want)
	}
	only := labtest.Scenario{Name: "OneCase", Run: func(r *labtest.Run) {
		r.Case("a fault before the credit", func(c *labtest.Run) {
			db := c.Open()
			db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpUpdate, Table: "accounts"})
			c.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}), labtest.ErrInjected)
		})
	}}
	wantNeutral(t, "RunCell(OneCase, trigger)", labtest.RunCell(t, only, trigger), unfiredUpdate)
}

// TestNeutralInterleavings holds Interleavings to the same rule: an
// interleaving whose fault never fired is neutral, its permutation says
// why, and when none could judge, neither could the cell.
func TestNeutralInterleavings(t *testing.T) {
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	sc := labtest.Scenario{Name: "AbortedCredit", Run: func(r *labtest.Run) {
		r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(c *labtest.Run, db *labtest.DB, answers []labtest.Answer) {
			c.WantCounts(answers, 1, 0, 1) // A fails before its credit; B applies
		}, labtest.Fault{When: labtest.Before, Op: labtest.OpUpdate, Table: "accounts", Session: "A"})
	}}
	if cell := labtest.RunCell(t, sc, correct.Variant); cell.Mark() != report.Pass {
		t.Fatalf("RunCell(AbortedCredit, correct) = %s: %s", cell.Mark(), cell.Detail)
	}
	cell := labtest.RunCell(t, sc, trigger)
	wantNeutral(t, "RunCell(AbortedCredit, trigger)", cell,
		"the fault 'before the UPDATE of accounts of session A' never fired: session A ran no such statement; it answered ")
	if len(cell.Permutations) == 0 {
		t.Fatalf("RunCell(AbortedCredit, trigger) has no interleavings")
	}
	for _, p := range cell.Permutations {
		if p.Mark() != report.Neutral {
			t.Errorf("RunCell(AbortedCredit, trigger), interleaving %s = %s (%q), want %s", p.Schedule, p.Mark(), p.Failures, report.Neutral)
		}
	}
}

// TestNeutralRewrite holds an argument rewrite to what it means: fired
// only when it changed an argument. A handler that binds the amount as a
// string gives DatabaseRefusal's rewrite of int64(500) to 0 nothing to
// rewrite: its row is stored as it came, and it answers applied, which
// the scenario, had the rewrite fired, would have called swallowing a
// refusal.
func TestNeutralRewrite(t *testing.T) {
	cell := labtest.RunCell(t, scenarios.Named(scenarios.All, "DatabaseRefusal"), stringAmount)
	wantNeutral(t, "RunCell(DatabaseRefusal, a handler that binds the amount as a string)", cell,
		"the argument rewrite 'before the INSERT into inbox' never fired: it matched the handler's statement but none of "+
			"its arguments, bound as string, string, int64, string")
	if !strings.Contains(cell.Transcript, "no argument it rewrites") {
		t.Errorf("RunCell(DatabaseRefusal, stringamount): the transcript does not mark the rewrite that changed nothing:\n%s", cell.Transcript)
	}
	wantMark(t, "RunCell(DatabaseRefusal, trigger)", labtest.RunCell(t, scenarios.Named(scenarios.All, "DatabaseRefusal"), trigger), report.Pass)
	// Property and SchemaGuards meet the same handler: Property's refused
	// row becomes a plain delivery, and SchemaGuards' cases that cannot
	// rewrite it set aside only themselves, not the cases after them.
	wantMark(t, "RunCell(Property, stringamount)", labtest.RunCell(t, scenarios.Named(scenarios.All, "Property"), stringAmount), report.Pass)
	guards := labtest.RunCell(t, scenarios.Named(scenarios.All, "SchemaGuards"), stringAmount)
	wantMark(t, "RunCell(SchemaGuards, stringamount)", guards, report.Pass)
	if !strings.Contains(guards.Detail, "could not judge") {
		t.Errorf("RunCell(SchemaGuards, stringamount).Detail = %q, want it to count the cases that could not judge", guards.Detail)
	}
}

// TestNeutralStall holds HoldDelivery to the same rule: a delivery that
// writes its inbox row without an INSERT into inbox (a trigger on another
// table does) cannot be stalled there, and the story that needed it
// cannot judge the handler; the lab does not stop the test.
func TestNeutralStall(t *testing.T) {
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	sc := labtest.Scenario{Name: "Stalled", Run: func(r *labtest.Run) {
		db := r.Open()
		release := db.HoldDelivery(e)
		r.WantError(db.Deliver(e), lab.ErrBusy)
		release()
	}}
	wantNeutral(t, "RunCell(Stalled, staged)", labtest.RunCell(t, sc, staged),
		"the delivery the lab was to stall at its INSERT into inbox never stalled: it ran no INSERT into inbox; it answered applied")
	if cell := labtest.RunCell(t, scenarios.Named(scenarios.All, "Duplicate"), staged); cell.Mark() != report.Pass {
		t.Errorf("RunCell(Duplicate, staged) = %s: %s; want it judged, and held", cell.Mark(), cell.Detail)
	}
}

// TestPostgresAbortRace holds AbortRace to its story, A's COMMIT rolled
// back, at REPEATABLE READ and SERIALIZABLE. naive/serialasduplicate
// answers a serialization failure as duplicate: in the interleavings where
// B commits first, A's INSERT fails with 40001 and A answers duplicate,
// rightly ("B applied, A duplicate; balance 500"), without ever reaching
// the COMMIT the fault waits for. Those interleavings are neutral, saying
// so, never ✗ (as they were when the scenario's expectations, written for
// a rolled-back A, judged them); the rest hold; the cell holds. The
// correct handler, which runs the delivery again after a 40001, reaches
// its COMMIT in every interleaving: none of its is neutral.
func TestPostgresAbortRace(t *testing.T) {
	srv := labtest.NeedPostgres(t)
	sc := scenarios.Named(scenarios.Postgres, "AbortRace")
	const why = "the fault 'before the COMMIT of session A' never fired: session A ran no such statement; it answered duplicate"
	for _, level := range []lab.Isolation{lab.RepeatableRead, lab.Serializable} {
		t.Run(levelSlug(level), func(t *testing.T) {
			cell := labtest.RunServerCell(t, sc, serialasduplicate.Variant, srv, labtest.Level{Isolation: level})
			wantMark(t, "RunServerCell(AbortRace, serialasduplicate)", cell, report.Pass)
			neutral := 0
			for _, p := range cell.Permutations {
				switch p.Mark() {
				case report.Fail:
					t.Errorf("AbortRace × serialasduplicate, %s = %s: %s", p.Schedule, report.Fail, p.Failures[0])
				case report.Neutral:
					neutral++
					if p.Neutral != why || p.Outcome != "B applied, A duplicate; balance 500" {
						t.Errorf("AbortRace × serialasduplicate, %s = %s, %q (%s), want %q, the outcome B applied, A duplicate",
							p.Schedule, report.Neutral, p.Neutral, p.Outcome, why)
					}
				}
			}
			if neutral == 0 || neutral == len(cell.Permutations) {
				t.Errorf("AbortRace × serialasduplicate: %d of %d interleavings neutral, want those where A never reached its COMMIT, and only those",
					neutral, len(cell.Permutations))
			}
			if !strings.Contains(cell.Detail, fmt.Sprintf("%d of %d cases could not judge the handler", neutral, len(cell.Permutations))) {
				t.Errorf("RunServerCell(AbortRace, serialasduplicate).Detail = %q, want it to count the %d neutral interleavings", cell.Detail, neutral)
			}
			right := labtest.RunServerCell(t, sc, correct.Variant, srv, labtest.Level{Isolation: level})
			wantMark(t, "RunServerCell(AbortRace, correct)", right, report.Pass)
			for _, p := range right.Permutations {
				if p.Mark() != report.Pass {
					t.Errorf("AbortRace × correct, %s = %s (%s %s), want %s: it reaches its COMMIT", p.Schedule, p.Mark(), p.Neutral, p.Failures, report.Pass)
				}
			}
		})
	}
}
