package checks_test

import (
	"idemlab/checks"
	"idemlab/lab"
)

// wrongFix is one plausible wrong fix of an exercise that repairs a
// handler, and the guarantees its check may name first in rejecting it.
type wrongFix struct {
	name  string // also the test name
	why   string
	fix   ledger
	check checks.Check[lab.Variant]
	by    []string
}

func (w wrongFix) variant() lab.Variant { return w.fix.variant("gallery/" + w.name) }

var repairs = []wrongFix{
	// Exercise 1: the key lives in three places.
	{"sourcescope/key-and-target-not-lookup", "the key and the ON CONFLICT target fixed, the lookup of the stored payload still by event_id: provider-b's repeat is compared with provider-a's row",
		ledger{lookup: `SELECT account_id, amount FROM inbox WHERE event_id = $12 AND $21 IS NOT NULL`}, checks.SourceScope, []string{"SourceScope", "SecondSourceRepeat"}},
	{"sourcescope/target-and-lookup-not-key", "ON CONFLICT (source, event_id) and the lookup fixed, the schema's key still event_id alone: no constraint matches the ON CONFLICT target",
		ledger{schema: key("event_id")}, checks.SourceScope, []string{"SourceScope"}},
	{"sourcescope/source-in-the-id", "the schema untouched, the source folded into event_id ('provider-b:evt-1'): the inbox no longer says which event it holds",
		ledger{schema: key("event_id"), insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4) ON CONFLICT (event_id) DO NOTHING`, prefixSource: true},
		checks.SourceScope, []string{"SourceScope", "Duplicate"}},

	// Exercise 2: foreign keys are per connection.
	{"missingaccount/pragma-inside-the-transaction", "PRAGMA foreign_keys = ON issued by the handler, inside its transaction, where SQLite ignores it",
		ledger{dsn: dsnWith("?_pragma=busy_timeout(5000)&_txlock=immediate"), pragmaInTx: true}, checks.MissingAccount, []string{"UnknownAccount"}},
	{"missingaccount/dsn-rewritten", "foreign_keys(1) in a DSN rewritten in a hurry, which lost busy_timeout and _txlock",
		ledger{dsn: dsnWith("?_pragma=foreign_keys(1)")}, checks.MissingAccount, []string{"Concurrent", "Race", "ConflictRace", "LockTimeout"}},
	{"missingaccount/refusal-is-duplicate", "foreign keys on, and the refusal of the INSERT caught and answered as a repeat",
		ledger{anyErrIsDuplicate: true}, checks.MissingAccount, []string{"UnknownAccount"}},

	// Exercise 4: check-then-act.
	{"checkthenact/select-outside-unique-is-duplicate", "the writes in one transaction, the SELECT still outside it, and the UNIQUE violation of the loser answered as a duplicate",
		ledger{seenOutside: true, insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`, uniqueIsDuplicate: true, effectFirst: true},
		checks.CheckThenAct, []string{"ConflictRace"}},
	{"checkthenact/no-payload-comparison", "the key decides inside the transaction, but a repeat is a duplicate whatever its payload",
		ledger{noCompare: true}, checks.CheckThenAct, []string{"ConflictRace", "PayloadConflict"}},
	{"checkthenact/select-outside", "the writes in one transaction, the SELECT still outside it",
		ledger{seenOutside: true, insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`, effectFirst: true},
		checks.CheckThenAct, []string{"Race", "ConflictRace", "Concurrent"}},
	{"checkthenact/row-first-autocommit", "the inbox row first, so the key refuses the loser — each statement still on its own",
		ledger{noTx: true}, checks.CheckThenAct, []string{"FaultSweep"}},

	// Exercise 5: one COMMIT.
	{"markfirst/credit-first", "the order swapped: the credit committed first, then the inbox row",
		ledger{effectFirst: true, noTx: true, insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4) ON CONFLICT (source, event_id) DO NOTHING`},
		checks.MarkFirst, []string{"Rollback", "FaultSweep"}},
	{"markfirst/compensating-delete", "two transactions, and a DELETE of the inbox row when the credit fails",
		ledger{compensate: true}, checks.MarkFirst, []string{"FaultSweep", "Crash"}},
	{"markfirst/autocommit-in-order", "no transaction at all, the row and then the credit",
		ledger{noTx: true}, checks.MarkFirst, []string{"Rollback", "FaultSweep"}},

	// Exercise 6: name the one conflict you expect.
	{"insertorignore/or-replace", "INSERT OR REPLACE instead of OR IGNORE",
		ledger{insert: `INSERT OR REPLACE INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`}, checks.InsertOrIgnore, []string{"DatabaseRefusal", "Duplicate"}},
	{"insertorignore/every-error-is-duplicate", "a plain INSERT, and its error caught and called a duplicate",
		ledger{insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`, anyErrIsDuplicate: true}, checks.InsertOrIgnore, []string{"DatabaseRefusal"}},
	{"insertorignore/raw-errors", "ON CONFLICT on the key, but the refusal returned as it came, not classified",
		ledger{rawErrors: true}, checks.InsertOrIgnore, []string{"DatabaseRefusal"}},
}
