package checks_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/checks"
	"idemlab/correct"
	"idemlab/equivalent/poolping"
	"idemlab/equivalent/untargeted"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/naive/busyasduplicate"
	"idemlab/naive/idonly"
	"idemlab/naive/sourceless"
	"idemlab/scenarios"
	newvariantsolution "idemlab/solutions/newvariant"
)

// Exercise 11: a new mistake and the scenario that catches it. Each wrong
// fix is a variant and a scenario; the story says what the student
// believed.
var newvariantFixes = []struct {
	name, story string
	work        checks.NewVariantWork
	by          []string
}{
	// The starting point's scenario, with a mistake made.
	{"scenario-asserts-nothing", "the mistake made, the scenario left as it was",
		checks.NewVariantWork{Variant: idonly.Variant, Scenario: mine}, []string{"Catches"}},
	{"an-old-mistake", "a mistake the kit already has (idonly), caught by a copy of its scenario",
		checks.NewVariantWork{Variant: idonly.Variant, Scenario: labtest.Scenario{Name: "Mine", Run: scenarios.Named(scenarios.All, "PayloadConflict").Run}}, []string{"New"}},
	{"asks-too-much", "a scenario that asks for more than the pattern gives: it fails on correct/ too",
		checks.NewVariantWork{Variant: trimmedIDs, Scenario: labtest.Scenario{Name: "Mine", Run: scenarios.Named(scenarios.All, "BusinessKey").Run}}, []string{"Fair"}},
	{"no-mistake", "no mistake at all: the variant is correct/, so nothing can catch it",
		checks.NewVariantWork{Variant: correctCopy, Scenario: labtest.Scenario{Name: "Mine", Run: scenarios.Named(scenarios.All, "Duplicate").Run}}, []string{"Catches"}},

	// Found by students who had not read the check (ROUND0.md).
	{"scenario-does-not-catch", `ids trimmed of spaces; the scenario delivers "evt-1 " twice and wants applied, ` +
		`duplicate and 700, which the variant gives too: only the lab's invariant (the inbox holds no row for "evt-1 ") fails it`,
		checks.NewVariantWork{Variant: trimmedIDs, Scenario: paddedTwice}, []string{"Asserts"}},
	{"scenario-asserts-nothing-of-its-own", `ids trimmed of spaces; the scenario delivers "evt-1 " once and asserts nothing: ` +
		`only the lab's invariant fails it`,
		checks.NewVariantWork{Variant: trimmedIDs, Scenario: paddedOnce}, []string{"Asserts"}},
	{"busy-duplicate-scenario-misses", "a busy BEGIN answered duplicate; the scenario repeats an event one delivery after the other, " +
		"so nothing is ever busy",
		checks.NewVariantWork{Variant: busyasduplicate.Variant, Scenario: repeatOnce}, []string{"Catches"}},
	{"scenario-unfair", `ids trimmed of spaces; the scenario wants the variant's answer ("evt-1 " is a repeat of evt-1), ` +
		"which correct/ does not give",
		checks.NewVariantWork{Variant: trimmedIDs, Scenario: paddedIsRepeat}, []string{"Fair"}},
	{"known-mistake-sourceless", "the key forgets the source, which the matrix's SourceScope already catches",
		checks.NewVariantWork{Variant: sourceless.Variant, Scenario: twoProviders}, []string{"New"}},

	// Wrong fixes of our own.
	{"text-of-an-equivalent", "the conflict target dropped, taken for a mistake, and a scenario that wants it in the SQL: " +
		"the variant is equivalent/untargeted, which does what correct/ does",
		checks.NewVariantWork{Variant: untargeted.Variant, Scenario: wantsConflictTarget}, []string{"Behaviour"}},
	{"counts-statements", "a SELECT 1 on the pool before each delivery, taken for a mistake (a wasted round trip), and a " +
		"scenario that counts the statements of a delivery: a handler that reads first runs one more, and is correct",
		checks.NewVariantWork{Variant: poolping.Variant, Scenario: fourStatements}, []string{"Fair"}},
	{"rollback-journal-only", "numeric ids written one way, caught, and a second story that wants a reader to make COMMIT " +
		"busy: in WAL mode, which is correct too, a reader never blocks COMMIT",
		checks.NewVariantWork{Variant: newvariantsolution.Variant, Scenario: readerBlocksCommit}, []string{"Fair"}},
	{"a-limit-tells-it", "a failed COMMIT looked up on the pool (found: applied), caught by a scenario that wants the error " +
		"correct/ gives; but the matrix's SideEffect, a limit, already tells the variant from correct/: " +
		"it e-mails the one receipt correct/ never sends",
		checks.NewVariantWork{Variant: commitLookupVariant, Scenario: lostCommitIsAnError}, []string{"New"}},

	// Blind students' fixes of round 1, accepted by the check of their day,
	// which judged the scenario's text and the variant's by Reworded alone.
	// Each scenario judges words (the variant's label, its schema's text
	// or structure, an error's text), and Behaviour runs it on correct/
	// labelled as the variant is, on correct/'s schema reworded and on
	// correct/'s errors reworded: it fails there.
	{"label-only", "the variant is correct/ with a mistake named; the scenario fails whatever variant names a mistake",
		checks.NewVariantWork{Variant: labelled(correctCopy, "a mistake"), Scenario: failsOnAMistakeNamed("provider-a", "evt-1")}, []string{"Behaviour"}},
	{"scenario-reads-the-label", "one key column, source/event_id (a real mistake); the scenario delivers one event, which the variant " +
		"applies as correct/ does, and fails whatever variant names a mistake",
		checks.NewVariantWork{Variant: slashKey, Scenario: failsOnAMistakeNamed("acme/eu", "7")}, []string{"Behaviour"}},
	{"harmless-unique-and-schema-text", "the inbox's key declared UNIQUE (source, event_id) instead of PRIMARY KEY, which behaves " +
		"alike; the scenario reads the inbox's CREATE TABLE and wants PRIMARY KEY (source, event_id) in it",
		checks.NewVariantWork{Variant: uniqueKey, Scenario: wantsKeyText}, []string{"Behaviour"}},
	{"harmless-key-order-and-index", "the inbox's key declared (event_id, source), which behaves alike; the scenario wants a unique " +
		"index listing source, then event_id (PRAGMA index_list, index_info)",
		checks.NewVariantWork{Variant: reorderedKey, Scenario: wantsKeyIndex}, []string{"Behaviour"}},
	{"scenario-reads-schema-text", "one key column, source/event_id (a real mistake); the scenario reads the inbox's CREATE TABLE and " +
		"wants PRIMARY KEY (source, event_id) in it, which correct/ written otherwise lacks",
		checks.NewVariantWork{Variant: slashKey, Scenario: wantsKeyText}, []string{"Behaviour"}},
	{"scenario-reads-the-index", "one key column, source/event_id (a real mistake); the scenario wants a unique index listing source, " +
		"then event_id, which correct/ keyed (event_id, source) lacks",
		checks.NewVariantWork{Variant: slashKey, Scenario: wantsKeyIndex}, []string{"Behaviour"}},
	{"harmless-message-text", "the payload conflict's message reworded, its kind kept; the scenario wants the words 'was applied with'",
		checks.NewVariantWork{Variant: conflictReworded, Scenario: wantsConflictWords(false)}, []string{"Behaviour"}},
	{"scenario-reads-error-text", "one key column, source/event_id (a real mistake), caught by the slash twins; the scenario also " +
		"wants the conflict's words 'was applied with', which a handler that says it otherwise does not give",
		checks.NewVariantWork{Variant: slashKey, Scenario: wantsConflictWords(true)}, []string{"Behaviour"}},

	// Of our own, for what Behaviour cannot see: a scenario that fails on
	// the variant's own name (correct/ labelled as the variant is named
	// otherwise), and one that fails on a harmless index only the variant
	// has (no rewording of correct/ has it). Catches runs the variant
	// unlabelled, and compares what it answers and stores with correct/.
	{"scenario-knows-the-name", "one key column, source/event_id (a real mistake); the scenario fails the variant of that name",
		checks.NewVariantWork{Variant: slashKey, Scenario: failsOnTheName(slashKey.Name)}, []string{"Catches"}},
	{"harmless-index-and-its-name", "an index on inbox (account_id), which changes nothing the handler answers or stores; " +
		"the scenario fails where that index exists",
		checks.NewVariantWork{Variant: extraIndex, Scenario: failsOnIndex("inbox_by_account")}, []string{"Catches"}},

	// Blind students' fixes of round 2 (testdata/blind/round2), accepted by
	// the check of their day.
	{"unused-column-counted", "a nullable column the handler never fills, taken for a mistake; the scenario counts the " +
		"inbox's columns (pragma_table_info) and wants correct/'s four: a correct handler whose inbox has an audit column fails it",
		checks.NewVariantWork{Variant: unusedColumn, Scenario: countsInboxColumns}, []string{"Behaviour"}},
	// asserts_nothing_of_its_own's story: an id starting with test_
	// recorded, never credited, answered applied, and a scenario that wants
	// only "applied": the lab's own check (the balance moved by less than
	// the inbox credits) fails it, the scenario does not. (The round's diff
	// itself answers duplicate for such an id, which its scenario's
	// WantOutcome catches: that pair is right.)
	{"scenario-wants-only-applied", "test_ ids recorded but never credited, answered applied; the scenario delivers " +
		"test_42 and wants applied: only the lab's invariant (balance against inbox) fails it",
		checks.NewVariantWork{Variant: uncreditedTestIDs, Scenario: wantsTestIDApplied}, []string{"Asserts"}},

	// Blind round 3 (testdata/blind/round3, b-newvariant__accountfirst),
	// accepted by the check of its day: no mistake at all. The variant looks
	// the account up first and answers a repeat naming a missing account
	// unknown account; correct/ answers payload conflict. Both are errors
	// that write nothing, and scenarios/repeat.go lets a handler check the
	// account first: FairSearch draws correct/ that does.
	{"account-first-is-no-mistake", "the account looked up before the inbox, taken for a mistake; the scenario wants " +
		"evt-1 repeated with a missing account to be a payload conflict, never unknown account",
		checks.NewVariantWork{Variant: accountFirst, Scenario: repeatNamesMissingAccount}, []string{"Fair"}},

	// Of our own, for what only the searches draw: each scenario holds on
	// correct/, on every listed equivalent and rewording and on the
	// variant unlabelled, and breaks on one drawn handler or rewording, in
	// one time zone or on one pool's shape.
	{"reads-sql-text-in-a-helper", "one key column (a real mistake), caught by the slash twins; the scenario also wants the " +
		"repeat's read to say FROM inbox WHERE, through a helper in another file, which the check's reading of the scenario's " +
		"own file does not follow: correct/ whose SELECT names the inbox i fails it (BehaviourSearch)",
		checks.NewVariantWork{Variant: slashKey, Scenario: wantsPlainFrom}, []string{"Behaviour"}},
	{"wants-the-key-primary", "one key column (a real mistake), caught by the slash twins; the scenario also wants the inbox's " +
		"key to be its PRIMARY KEY (pragma_index_list's origin 'pk'): correct/ whose key is UNIQUE (source, event_id) on NOT NULL " +
		"columns does the same (BehaviourSearch)",
		checks.NewVariantWork{Variant: slashKey, Scenario: wantsPrimaryKey}, []string{"Behaviour"}},
	{"ids-dated-in-local-time", "numeric ids written one way (the reference solution's mistake), caught; the scenario also " +
		"delivers evt-<date> dated in UTC and again dated in local time, and wants a duplicate: west of UTC, where " +
		"2000-01-01 00:00 UTC is still 1999-12-31, correct/ applies both (FairSearch, in São Paulo or New York)",
		checks.NewVariantWork{Variant: newvariantsolution.Variant, Scenario: localDateIDs}, []string{"Fair"}},
	{"wants-a-pool-of-one", "numeric ids written one way, caught; the scenario also wants the handler's pool to be the " +
		"lab's or one connection, as correct/'s doc recommends: correct/ on a pool of two connections is correct too (FairSearch)",
		checks.NewVariantWork{Variant: newvariantsolution.Variant, Scenario: wantsPoolOfOne}, []string{"Fair"}},
	{"twins-dated-in-two-zones", "one key column (a real mistake); the scenario's twins are acme/<year>'s 7 and acme's " +
		"<year>/7, the first year read in UTC and the second in local time: west of UTC they differ, the variant applies both, " +
		"and the scenario holds on it (CatchesSearch, in São Paulo or New York)",
		checks.NewVariantWork{Variant: slashKey, Scenario: twinsDatedInTwoZones}, []string{"Catches"}},
}

func TestGalleryNewVariant(t *testing.T) {
	for _, w := range newvariantFixes {
		t.Run("newvariant/"+w.name, func(t *testing.T) {
			t.Parallel()
			reject(t, checks.NewVariant, w.work, w.by)
		})
	}
}

var (
	correctCopy = ledger{}.variant("gallery/newvariant/correct-copy")
	mine        = labtest.Scenario{Name: "Mine", Shows: "(nothing)", Run: func(r *labtest.Run) { r.Open() }}
	// trimmedIDs is correct/ that trims an event id of spaces before it
	// stores or looks it up: "evt-1 " is taken for evt-1.
	trimmedIDs = rewriteIDs("gallery/newvariant/trimmed-ids", "event ids trimmed of surrounding spaces", strings.TrimSpace)
)

// rewriteIDs is correct/ with the event id rewritten by f before anything
// else: the mistake of a handler that normalises ids.
func rewriteIDs(name, mistake string, f func(string) string) lab.Variant {
	return lab.Variant{Name: name, Mistake: mistake, Schema: correct.Schema, DSN: correct.DSN,
		New: func(db *sql.DB) lab.Processor { return idRewriter{correct.New(db), f} }}
}

type idRewriter struct {
	inner lab.Processor
	f     func(string) string
}

func (h idRewriter) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	e.EventID = h.f(e.EventID)
	return h.inner.Process(ctx, e)
}

var (
	plainEvt  = lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	paddedEvt = lab.Event{Source: "provider-a", EventID: "evt-1 ", AccountID: 1, Amount: 700}

	paddedTwice = labtest.Scenario{Name: "PaddedID", Shows: "an id with a trailing space applies once, and its repeat is a duplicate",
		Run: func(r *labtest.Run) {
			db := r.Open()
			r.WantOutcome(db.Deliver(paddedEvt), lab.Applied)
			r.WantOutcome(db.Deliver(paddedEvt), lab.Duplicate)
			r.WantBalance(db, 1, 700)
		}}
	paddedOnce = labtest.Scenario{Name: "PaddedID", Shows: "an id with a trailing space can be delivered",
		Run: func(r *labtest.Run) {
			db := r.Open()
			db.Deliver(paddedEvt)
		}}
	paddedIsRepeat = labtest.Scenario{Name: "PaddedID", Shows: `"evt-1 " is evt-1 with padding: a repeat, credited once`,
		Run: func(r *labtest.Run) {
			db := r.Open()
			padded := paddedEvt
			padded.Amount = plainEvt.Amount
			r.WantOutcome(db.Deliver(plainEvt), lab.Applied)
			r.WantOutcome(db.Deliver(padded), lab.Duplicate)
			r.WantBalance(db, 1, 500)
		}}
	repeatOnce = labtest.Scenario{Name: "BusyNotDuplicate", Shows: "a delivery that cannot get the lock is never answered duplicate",
		Run: func(r *labtest.Run) {
			db := r.Open()
			r.WantOutcome(db.Deliver(plainEvt), lab.Applied)
			r.WantOutcome(db.Deliver(plainEvt), lab.Duplicate)
			r.WantBalance(db, 1, 500)
		}}
	twoProviders = labtest.Scenario{Name: "TwoProviders", Shows: "evt-1 from two providers is two events: both credit",
		Run: func(r *labtest.Run) {
			db := r.Open()
			other := plainEvt
			other.Source = "provider-b"
			r.WantOutcome(db.Deliver(plainEvt), lab.Applied)
			r.WantOutcome(db.Deliver(other), lab.Applied)
			r.WantBalance(db, 1, 1000)
		}}
	wantsConflictTarget = labtest.Scenario{Name: "ConflictTarget", Shows: "the INSERT names the key it conflicts on",
		Run: func(r *labtest.Run) {
			db := r.Open()
			r.WantOutcome(db.Deliver(plainEvt), lab.Applied)
			if !strings.Contains(r.Transcript.String(), "ON CONFLICT (source, event_id)") {
				r.Errorf("the INSERT has no ON CONFLICT (source, event_id)")
			}
		}}
	fourStatements = labtest.Scenario{Name: "NoWaste", Shows: "a delivery runs four statements: BEGIN, INSERT, UPDATE, COMMIT",
		Run: func(r *labtest.Run) {
			db := r.Open()
			a := db.Deliver(plainEvt)
			r.WantOutcome(a, lab.Applied)
			if n := db.Steps(a.Session); n != 4 {
				r.Errorf("Steps(%s) = %d, want 4", a.Session, n)
			}
		}}
	readerBlocksCommit = labtest.Scenario{Name: "NumericIDs", Shows: "0042 and 42 are two events; a reader makes COMMIT busy",
		Run: func(r *labtest.Run) {
			db := r.Open()
			padded := lab.Event{Source: "provider-a", EventID: "0042", AccountID: 1, Amount: 500}
			plain := padded
			plain.EventID, plain.Amount = "42", 700
			r.WantOutcome(db.Deliver(padded), lab.Applied)
			r.WantOutcome(db.Deliver(plain), lab.Applied)
			release := db.HoldReadLock()
			r.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "43", AccountID: 1, Amount: 1}), lab.ErrBusy)
			release()
		}}
	lostCommitIsAnError = labtest.Scenario{Name: "LostCommit", Shows: "a COMMIT whose answer is lost is an error, and the retry a duplicate",
		Run: func(r *labtest.Run) {
			db := r.Open()
			db.Inject(labtest.Fault{When: labtest.After, Op: labtest.OpCommit})
			r.WantError(db.Deliver(plainEvt, labtest.Delivery{Unchecked: true}), labtest.ErrInjected)
			db.Lift()
			r.WantOutcome(db.Deliver(plainEvt), lab.Duplicate)
		}}
)

// The variants of round 1's blind students: correct/ with one key column
// (source/event_id, lab.Key's String), with its key declared UNIQUE or in
// the other order, with its conflict's message reworded, with an index it
// never uses.
var (
	slashKey     = labelled(ledger{rowCheck: true, schema: keyColumn, keyString: true}.variant("gallery/newvariant/slash-key"), "one key column, source/event_id")
	uniqueKey    = labelled(ledger{rowCheck: true, schema: key2("UNIQUE (source, event_id)")}.variant("gallery/newvariant/unique-key"), "the key UNIQUE, not PRIMARY KEY")
	reorderedKey = labelled(ledger{rowCheck: true, schema: key("event_id, source")}.variant("gallery/newvariant/key-reordered"), "the key declared (event_id, source)")
	extraIndex   = labelled(ledger{rowCheck: true, schema: func(s string) string {
		return s + "CREATE INDEX inbox_by_account ON inbox (account_id);\n"
	}}.variant("gallery/newvariant/extra-index"), "an index nothing uses")
	// unusedColumn is round 2's: correct/ whose inbox has a column it never
	// fills.
	unusedColumn = labelled(ledger{rowCheck: true, schema: func(s string) string {
		return strings.Replace(s, "\tPRIMARY KEY (source, event_id)", "\tnote       TEXT,\n\tPRIMARY KEY (source, event_id)", 1)
	}}.variant("gallery/newvariant/unused-column"), "the inbox carries a column the handler never fills")
	conflictReworded = lab.Variant{Name: "gallery/newvariant/conflict-reworded", Mistake: "the conflict's message does not say 'was applied'",
		Schema: correct.Schema, DSN: correct.DSN,
		New: func(db *sql.DB) lab.Processor { return conflictWords{correct.New(db)} }}
)

// labelled is v with its mistake named so.
func labelled(v lab.Variant, mistake string) lab.Variant {
	v.Mistake = mistake
	return v
}

// key2 rewrites the inbox's key constraint whole.
func key2(constraint string) func(string) string {
	return func(s string) string { return strings.Replace(s, "PRIMARY KEY (source, event_id)", constraint, 1) }
}

// conflictWords says a payload conflict in other words, of the same kind.
type conflictWords struct{ inner lab.Processor }

func (h conflictWords) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	o, err := h.inner.Process(ctx, e)
	if errors.Is(err, lab.ErrPayloadConflict) {
		err = fmt.Errorf("%w: %s already stored otherwise", lab.ErrPayloadConflict, e.Key())
	}
	return o, err
}

// failsOnAMistakeNamed delivers source's id once, wants it applied, and
// fails whatever variant names a mistake.
func failsOnAMistakeNamed(source, id string) labtest.Scenario {
	return labtest.Scenario{Name: "Mine", Shows: "(what a passing run demonstrates)", Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1})
		r.WantOutcome(db.Deliver(lab.Event{Source: source, EventID: id, AccountID: 1, Amount: 100}), lab.Applied)
		if r.Variant.Mistake != "" {
			r.Errorf("%s: %s", r.Variant.Name, r.Variant.Mistake)
		}
	}}
}

// failsOnTheName fails the variant called name.
func failsOnTheName(name string) labtest.Scenario {
	return labtest.Scenario{Name: "Mine", Shows: "acme/eu's 7 applies", Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1})
		r.WantOutcome(db.Deliver(lab.Event{Source: "acme/eu", EventID: "7", AccountID: 1, Amount: 100}), lab.Applied)
		if r.Variant.Name == name {
			r.Errorf("%s is the variant with one key column", name)
		}
	}}
}

// failsOnIndex fails where the inbox has an index called index.
func failsOnIndex(index string) labtest.Scenario {
	return labtest.Scenario{Name: "Mine", Shows: "no index the handler does not need", Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1})
		r.WantOutcome(db.Deliver(plainEvt), lab.Applied)
		var n int
		if err := db.Pool().QueryRow(`SELECT count(*) FROM pragma_index_list('inbox') WHERE name = $1`, index).Scan(&n); err != nil {
			r.Errorf("index_list: %v", err)
		} else if n > 0 {
			r.Errorf("the inbox has the index %s, which no statement needs", index)
		}
	}}
}

// uncreditedTestIDs is correct/, except that an event whose id starts with
// test_ is recorded and answered applied without its credit.
var uncreditedTestIDs = lab.Variant{Name: "gallery/newvariant/uncredited-test-ids", Mistake: "test_ ids are never credited",
	Schema: correct.Schema, DSN: correct.DSN,
	New: func(db *sql.DB) lab.Processor { return uncreditedTest{correct.New(db), db} }}

type uncreditedTest struct {
	inner lab.Processor
	db    *sql.DB
}

func (h uncreditedTest) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if !strings.HasPrefix(e.EventID, "test_") || e.Validate() != nil {
		return h.inner.Process(ctx, e)
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)
		ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, lab.Classify(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		tx.Rollback()
		return h.inner.Process(ctx, e) // a repeat: correct/'s comparison
	}
	if err := tx.Commit(); err != nil {
		return 0, lab.Classify(err)
	}
	return lab.Applied, nil
}

// wantsTestIDApplied delivers test_42 once and wants it applied, nothing
// more.
var wantsTestIDApplied = labtest.Scenario{Name: "Mine", Shows: "an event whose id starts with test_ is applied", Run: func(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1})
	r.WantOutcome(db.Deliver(lab.Event{Source: "provider-a", EventID: "test_42", AccountID: 1, Amount: 500}), lab.Applied)
}}

// countsInboxColumns wants an event applied and credited, and the inbox to
// have correct/'s four columns (pragma_table_info): the schema's
// structure, not what the handler answers or stores.
var countsInboxColumns = labtest.Scenario{Name: "Mine", Shows: "the inbox has exactly an event's four columns", Run: func(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1})
	r.WantOutcome(db.Deliver(plainEvt), lab.Applied)
	r.WantBalance(db, 1, plainEvt.Amount)
	var columns int
	if err := db.Pool().QueryRow(`SELECT count(*) FROM pragma_table_info('inbox')`).Scan(&columns); err != nil {
		r.Errorf("reading the inbox's columns: %v", err)
	} else if columns != 4 {
		r.Errorf("inbox columns = %d, want 4", columns)
	}
}}

// wantsKeyText wants the inbox's CREATE TABLE to say PRIMARY KEY (source,
// event_id).
var wantsKeyText = labtest.Scenario{Name: "Mine", Shows: "the inbox is keyed by (source, event_id)", Run: func(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1})
	r.WantOutcome(db.Deliver(lab.Event{Source: "acme/eu", EventID: "7", AccountID: 1, Amount: 100}), lab.Applied)
	var ddl string
	if err := db.Pool().QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'inbox'`).Scan(&ddl); err != nil {
		r.Errorf("reading the inbox's schema: %v", err)
		return
	}
	if !strings.Contains(ddl, "PRIMARY KEY (source, event_id)") {
		r.Errorf("the inbox is not keyed by (source, event_id):\n%s", ddl)
	}
}}

// wantsKeyIndex wants a unique index of the inbox on source, then
// event_id.
var wantsKeyIndex = labtest.Scenario{Name: "Mine", Shows: "the inbox has a unique index on (source, event_id)", Run: func(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1})
	r.WantOutcome(db.Deliver(lab.Event{Source: "acme/eu", EventID: "7", AccountID: 1, Amount: 100}), lab.Applied)
	var found int
	err := db.Pool().QueryRow(`SELECT count(*) FROM pragma_index_list('inbox') AS il WHERE il."unique" = 1
		AND (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info(il.name) ORDER BY seqno)) = 'source,event_id'`).Scan(&found)
	if err != nil {
		r.Errorf("index_list: %v", err)
	} else if found == 0 {
		r.Errorf("no unique index on (source, event_id)")
	}
}}

// wantsConflictWords wants a payload conflict's error to say "was applied
// with"; with twins, it first delivers acme/eu's 7 and acme's eu/7 and
// wants both applied.
func wantsConflictWords(twins bool) labtest.Scenario {
	return labtest.Scenario{Name: "Mine", Shows: "a conflict names the stored payload", Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1})
		first := lab.Event{Source: "acme/eu", EventID: "7", AccountID: 1, Amount: 100}
		r.WantOutcome(db.Deliver(first), lab.Applied)
		if twins {
			second := lab.Event{Source: "acme", EventID: "eu/7", AccountID: 1, Amount: 100}
			r.WantOutcome(db.Deliver(second), lab.Applied)
			r.WantBalance(db, 1, 200)
		}
		bad := first
		bad.Amount = 999
		if a := db.Deliver(bad); r.WantError(a, lab.ErrPayloadConflict) && !strings.Contains(a.Err.Error(), "was applied with") {
			r.Errorf("Process(%v) = %v, want the stored payload named", bad, a.Err)
		}
	}}
}

// commitLookupVariant is correct/ that, when its COMMIT fails, looks the
// event up on the pool and answers applied if its row is there.
var commitLookupVariant = lab.Variant{Name: "gallery/newvariant/commit-lookup", Mistake: "a failed COMMIT looked up: the row there means applied",
	Schema: correct.Schema, DSN: correct.DSN, New: func(db *sql.DB) lab.Processor { return commitLookup{db} }}

type commitLookup struct{ db *sql.DB }

func (h commitLookup) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	classify := func(err error) error {
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return lab.Classify(err)
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)
		ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, classify(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	outcome := lab.Applied
	if inserted == 1 {
		res, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID)
		if err != nil {
			return 0, classify(err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return 0, fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
		}
	} else {
		var account, amount int64
		if err := tx.QueryRowContext(ctx, `SELECT account_id, amount FROM inbox WHERE source = $1 AND event_id = $2`,
			e.Source, e.EventID).Scan(&account, &amount); err != nil {
			return 0, classify(err)
		}
		if account != e.AccountID || amount != e.Amount {
			return 0, fmt.Errorf("%w: %s", lab.ErrPayloadConflict, e.Key())
		}
		outcome = lab.Duplicate
	}
	if err := tx.Commit(); err != nil {
		var n int
		if outcome == lab.Applied && h.db.QueryRowContext(ctx, `SELECT count(*) FROM inbox
			WHERE source = $1 AND event_id = $2 AND account_id = $3 AND amount = $4`,
			e.Source, e.EventID, e.AccountID, e.Amount).Scan(&n) == nil && n == 1 {
			return lab.Applied, nil // the mistake: the row may be another delivery's
		}
		return 0, classify(err)
	}
	return outcome, nil
}

// accountFirst is round 3's: correct/ that looks the account up first, in
// its transaction, and answers a missing one unknown account before it
// reads the inbox.
var accountFirst = lab.Variant{Name: "gallery/newvariant/account-first", Mistake: "the account looked up before the inbox",
	Schema: correct.Schema, DSN: correct.DSN,
	New: func(db *sql.DB) lab.Processor { return accountChecked{correct.New(db), db} }}

type accountChecked struct {
	inner lab.Processor
	db    *sql.DB
}

// Process answers an event for a missing account unknown account, else as
// correct/ does. (Its lookup runs before correct/'s transaction, not in it:
// the same answers, for what the scenario asks.)
func (h accountChecked) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	var exists int
	if err := h.db.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE id = $1`, e.AccountID).Scan(&exists); err != nil {
		return 0, lab.Classify(err)
	}
	if exists == 0 {
		return 0, fmt.Errorf("%w: account %d does not exist", lab.ErrUnknownAccount, e.AccountID)
	}
	return h.inner.Process(ctx, e)
}

// repeatNamesMissingAccount is round 3's scenario: evt-1, then evt-1
// naming account 99, which does not exist, wanted a payload conflict.
var repeatNamesMissingAccount = labtest.Scenario{Name: "Mine", Shows: "a repeat that names a missing account is a payload conflict",
	Run: func(r *labtest.Run) {
		db := r.Open()
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		r.WantOutcome(db.Deliver(e), lab.Applied)
		twin := e
		twin.AccountID = 99
		a := db.Deliver(twin)
		r.WantError(a, lab.ErrPayloadConflict)
		if errors.Is(a.Err, lab.ErrUnknownAccount) {
			r.Errorf("the repeat of evt-1 with account 99 answered unknown account: the key decides first")
		}
		r.WantBalance(db, 1, 500)
		r.WantInbox(db, 1)
	}}

// slashTwins delivers acme/eu's 7 and acme's eu/7, two events, and the
// second again: both apply, the repeat is a duplicate.
func slashTwins(r *labtest.Run, db *labtest.DB) {
	first := lab.Event{Source: "acme/eu", EventID: "7", AccountID: 1, Amount: 100}
	second := lab.Event{Source: "acme", EventID: "eu/7", AccountID: 1, Amount: 100}
	r.WantOutcome(db.Deliver(first), lab.Applied)
	r.WantOutcome(db.Deliver(second), lab.Applied)
	r.WantOutcome(db.Deliver(second), lab.Duplicate)
	r.WantBalance(db, 1, 200)
}

// wantsPlainFrom catches one key column by the slash twins, and wants the
// repeat's read of the inbox to say FROM inbox WHERE (ranSQL, in another
// file).
var wantsPlainFrom = labtest.Scenario{Name: "Mine", Shows: "two keys alike once joined are two events; a repeat reads the inbox plainly",
	Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1})
		slashTwins(r, db)
		if !ranSQL(r, "from inbox where") {
			r.Errorf("no statement read FROM inbox WHERE")
		}
	}}

// wantsPrimaryKey catches one key column by the slash twins, and wants the
// inbox's key to be a PRIMARY KEY.
var wantsPrimaryKey = labtest.Scenario{Name: "Mine", Shows: "two keys alike once joined are two events; the inbox has a primary key",
	Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1})
		slashTwins(r, db)
		var n int
		if err := db.Pool().QueryRow(`SELECT count(*) FROM pragma_index_list('inbox') WHERE origin = 'pk'`).Scan(&n); err != nil {
			r.Errorf("index_list: %v", err)
		} else if n != 1 {
			r.Errorf("primary keys of the inbox = %d, want 1", n)
		}
	}}

// localDateIDs is numericIDs, then evt-<date> dated in UTC and again in
// local time, which it takes for one event.
var localDateIDs = labtest.Scenario{Name: "Mine", Shows: "0042 and 42 are two events; an event dated twice is one",
	Run: func(r *labtest.Run) {
		numericIDs.Run(r)
		db := r.Open(labtest.Account{ID: 1})
		now := time.Now()
		e := lab.Event{Source: "provider-a", EventID: "evt-" + now.UTC().Format("2006-01-02"), AccountID: 1, Amount: 500}
		again := e
		again.EventID = "evt-" + now.Format("2006-01-02")
		r.WantOutcome(db.Deliver(e), lab.Applied)
		r.WantOutcome(db.Deliver(again), lab.Duplicate)
	}}

// wantsPoolOfOne is numericIDs, and wants the handler's pool to be the
// lab's (no limit) or one connection.
var wantsPoolOfOne = labtest.Scenario{Name: "Mine", Shows: "0042 and 42 are two events, on a pool as correct/'s doc says",
	Run: func(r *labtest.Run) {
		numericIDs.Run(r)
		db := r.Open(labtest.Account{ID: 1})
		r.WantOutcome(db.Deliver(plainEvt), lab.Applied)
		if n := db.Pool().Stats().MaxOpenConnections; n > 1 {
			r.Errorf("the handler's pool opens up to %d connections, want one (or the lab's)", n)
		}
	}}

// twinsDatedInTwoZones delivers acme/<year>'s 7 and acme's <year>/7, the
// first year read in UTC, the second in local time, and wants both
// applied.
var twinsDatedInTwoZones = labtest.Scenario{Name: "Mine", Shows: "two keys alike once joined are two events",
	Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1})
		now := time.Now()
		first := lab.Event{Source: "acme/" + now.UTC().Format("2006"), EventID: "7", AccountID: 1, Amount: 100}
		second := lab.Event{Source: "acme", EventID: now.Format("2006") + "/7", AccountID: 1, Amount: 100}
		r.WantOutcome(db.Deliver(first), lab.Applied)
		r.WantOutcome(db.Deliver(second), lab.Applied)
		r.WantBalance(db, 1, 200)
	}}

// TestRewordedHoldsTheMatrix runs every column of the matrix on each of
// checks.Rewordings, and on correct/ unlabelled (checks.Unlabelled): each
// must give correct/'s verdict everywhere, or it is no test of a scenario
// that reads words. It runs in the full suite: 145 cells.
func TestRewordedHoldsTheMatrix(t *testing.T) {
	if !labtest.FullSuite() {
		t.Skipf("the quick suite: %s=1 runs every rewording on every column", labtest.FullEnv)
	}
	t.Logf("-rapid.seed=%v (0: rapid draws one, and names it in a failure)", flag.Lookup("rapid.seed").Value)
	variants := []lab.Variant{checks.Unlabelled(correct.Variant)}
	for _, rw := range checks.Rewordings {
		variants = append(variants, rw.Variant)
	}
	// correct/'s verdict on each column, run once (by the first subtest
	// that asks) for every variant compared with it: a cell's verdict is a
	// function of its scenario and handler.
	ofCorrect := map[string]func(t *testing.T) *report.Cell{}
	for _, sc := range scenarios.All {
		var once sync.Once
		var cell *report.Cell
		ofCorrect[sc.Name] = func(t *testing.T) *report.Cell {
			once.Do(func() { cell = labtest.RunCell(t, sc, correct.Variant) })
			return cell
		}
	}
	for _, v := range variants {
		for _, sc := range scenarios.All {
			t.Run(v.Name+"/"+sc.Name, func(t *testing.T) {
				t.Parallel()
				got, want := labtest.RunCell(t, sc, v), ofCorrect[sc.Name](t)
				if want == nil {
					t.Fatalf("RunCell(%s, correct) gave no verdict (the lab stopped the test that ran it)", sc.Name)
				}
				if got.Pass != want.Pass || !slices.Equal(got.Failures, want.Failures) || got.IsNeutral() != want.IsNeutral() {
					t.Errorf("RunCell(%s, %s) = %v %q (%s), want correct/'s %v %q (%s)", sc.Name, v.Name,
						got.Pass, got.Failures, got.Neutral, want.Pass, want.Failures, want.Neutral)
				}
			})
		}
	}
}

// TestRewordedChangesTheText holds checks.Reworded to what it is for: a
// scenario that judges a delivery by the text of its statements (here,
// whether the transcript shows the id it stored) holds on correct/ and
// fails on it.
func TestRewordedChangesTheText(t *testing.T) {
	const id = "evt-text-1"
	sc := labtest.Scenario{Name: "ReadsText", Run: func(r *labtest.Run) {
		db := r.Open()
		e := plainEvt
		e.EventID = id
		r.WantOutcome(db.Deliver(e), lab.Applied)
		for _, l := range r.Transcript.Lines() {
			if strings.Contains(l.Text, "INSERT INTO inbox") && strings.Contains(l.Text, "'"+id+"'") {
				return
			}
		}
		r.Errorf("no INSERT INTO inbox of %s in the transcript", id)
	}}
	if cell := labtest.RunCell(t, sc, correct.Variant); !cell.Pass {
		t.Fatalf("RunCell(ReadsText, correct) fails: %v", cell.Failures)
	}
	if cell := labtest.RunCell(t, sc, checks.Reworded); cell.Pass {
		t.Errorf("RunCell(ReadsText, %s) holds, want it to fail: the text is the same\n%s", checks.Reworded.Name, cell.Transcript)
	}
}
