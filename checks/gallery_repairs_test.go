package checks_test

import (
	"idemlab/checks"
	"idemlab/correct"
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
	// The student keeps both columns and keys the inbox by one more,
	// event_key, written source || ':' || event_id, the way they would
	// write it in a log line. Every source and id of the matrix is free of
	// ':', and each key applies once. But acme:eu's event x and acme's
	// event eu:x are one key, acme:eu:x: the second is answered as a
	// repeat of the first (or a payload conflict) and never credits.
	{"sourcescope/key-column-with-a-colon", "the key in one column, source || ':' || event_id: acme:eu's x and acme's eu:x are one key",
		ledger{rowCheck: true, schema: keyColumn,
			insert: `INSERT INTO inbox (event_key, source, event_id, account_id, amount) VALUES ($1 || ':' || $2, $1, $2, $3, $4)
				ON CONFLICT (event_key) DO NOTHING`,
			lookup: `SELECT account_id, amount FROM inbox WHERE event_key = $1 || ':' || $2`},
		checks.SourceScope, []string{"KeySearch"}},
	// The same key column, written from Go with lab.Key's own String
	// (source/event_id), which renders a key for people and escapes
	// nothing. A '/' in an id ("in/3") and a source that ends where the
	// id's first part begins ("provider-a/in" with "3") make one key of two
	// events.
	{"sourcescope/key-column-from-key-string", "the key in one column, lab.Key's String (source/event_id): provider-a's in/3 and provider-a/in's 3 are one key",
		ledger{rowCheck: true, schema: keyColumn, keyString: true}, checks.SourceScope, []string{"KeySearch"}},
	// A blind student's fix, accepted by the check of its day: the same
	// key column, joined with the ASCII unit separator (U+001F), "a control
	// character made for separating fields, which no id contains". But
	// lab.Event.Validate refuses only NUL: provider-a's x<US>evt-1 and
	// provider-a<US>x's evt-1 are one key, and the second is answered as a
	// repeat of the first (or a payload conflict) and never credits.
	// KeySearch's twins split keys around such separators too.
	{"sourcescope/key-column-with-a-unit-separator", "the key in one column, source || char(31) || event_id: provider-a's x\x1fevt-1 and provider-a\x1fx's evt-1 are one key",
		ledger{rowCheck: true, schema: keyColumn,
			insert: `INSERT INTO inbox (event_key, source, event_id, account_id, amount) VALUES ($1 || char(31) || $2, $1, $2, $3, $4)
				ON CONFLICT (event_key) DO NOTHING`,
			lookup: `SELECT account_id, amount FROM inbox WHERE event_key = $1 || char(31) || $2`},
		checks.SourceScope, []string{"KeySearch"}},
	// A blind student's fix (round 2's source_prefix32_in_key), accepted
	// by the check of its day, whose sources were all short: the key in one
	// column, the source cut to its first 32 bytes, a separator and the id
	// ("a provider's name is short; this keeps the index small"). The
	// student joined them with a NUL in Go; here the cut source is written
	// in hex, which holds no ':', so that only the cut makes two keys one.
	// hooks.example/…/eu and …/us, 35 bytes each, share evt-1's key: the
	// second is answered as a repeat of the first (or a payload conflict)
	// and never credits.
	{"sourcescope/key-column-with-the-source-cut-to-32-bytes", "the key in one column, the source's first 32 bytes, ':' and event_id: two sources alike in their first 32 bytes are one",
		ledger{rowCheck: true, schema: keyColumn,
			insert: `INSERT INTO inbox (event_key, source, event_id, account_id, amount)
				VALUES (hex(substr(CAST($1 AS BLOB), 1, 32)) || ':' || $2, $1, $2, $3, $4)
				ON CONFLICT (event_key) DO NOTHING`,
			lookup: `SELECT account_id, amount FROM inbox WHERE event_key = hex(substr(CAST($1 AS BLOB), 1, 32)) || ':' || $2`},
		checks.SourceScope, []string{"KeySearch"}},
	// A blind student's fix (round 3's crc32source, accepted by the check
	// of its day): the key is (source_crc, event_id), source_crc the
	// source's CRC-32 computed in Go ("keeps the primary key small however
	// long providers' names are"), in the schema, the ON CONFLICT target
	// and the lookup. Two sources whose CRC-32 is one are one: each sends
	// evt-1, and the second is answered as a repeat of the first (or a
	// payload conflict) and never credits.
	{"sourcescope/key-by-the-source-crc-32", "the key (CRC-32 of the source, event_id): two sources of one CRC-32 sending evt-1 are one event",
		ledger{rowCheck: true, schema: crcSourceKey, sourceCRC: true}, checks.SourceScope, []string{"KeySearch"}},
	// Blind students' fixes (checks/testdata/blind/round0, accepted by the
	// checks of their day): the key fixed in all three places, and then
	// "normalised" on the way in. Provider names come from configuration in
	// whatever case an operator typed, so the source is lowered and trimmed
	// before it is stored and looked up; ids arrive with stray spaces, so
	// the id is trimmed. Either makes two events of one: 'Provider-B' and
	// 'provider-b', or 'evt-1' and 'evt-1 ', are one key, and the second
	// never credits.
	{"sourcescope/source-lowered-and-trimmed", "the source lowered and trimmed before it is stored and looked up: Provider-B's evt-1 is taken for provider-b's",
		ledger{insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES (lower(trim($1)), $2, $3, $4)
				ON CONFLICT (source, event_id) DO NOTHING`,
			lookup: `SELECT account_id, amount FROM inbox WHERE source = lower(trim($1)) AND event_id = $2`},
		checks.SourceScope, []string{"Edges", "Property", "KeySearch"}},
	{"sourcescope/event-id-trimmed", "the event id trimmed before it is stored and looked up: 'evt-1 ' is taken for 'evt-1'",
		ledger{insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, trim($2), $3, $4)
				ON CONFLICT (source, event_id) DO NOTHING`,
			lookup: `SELECT account_id, amount FROM inbox WHERE source = $1 AND event_id = trim($2)`},
		checks.SourceScope, []string{"Edges", "Property", "KeySearch"}},

	// Exercise 2: foreign keys are per connection.
	{"missingaccount/pragma-inside-the-transaction", "PRAGMA foreign_keys = ON issued by the handler, inside its transaction, where SQLite ignores it",
		ledger{dsn: dsnWith("?_pragma=busy_timeout(5000)&_txlock=immediate"), pragmaInTx: true}, checks.MissingAccount, []string{"UnknownAccount"}},
	{"missingaccount/dsn-rewritten", "foreign_keys(1) in a DSN rewritten in a hurry, which lost busy_timeout and _txlock",
		ledger{dsn: dsnWith("?_pragma=foreign_keys(1)")}, checks.MissingAccount, []string{"Concurrent", "Race", "ConflictRace", "LockTimeout"}},
	{"missingaccount/refusal-is-duplicate", "foreign keys on, and the refusal of the INSERT caught and answered as a repeat",
		ledger{anyErrIsDuplicate: true}, checks.MissingAccount, []string{"UnknownAccount"}},
	// The student leaves the DSN as it is and has New run PRAGMA
	// foreign_keys = ON on the pool: on one connection, the one database/sql
	// hands New. Every check that delivers one event at a time reuses that
	// connection, and the foreign key refuses account 99. Once the pool
	// closes its idle connections (or two deliveries at once need two), a
	// delivery runs on a connection without foreign keys, and a bug that
	// hands the INSERT account 99 stores a row for an account that does
	// not exist.
	{"missingaccount/pragma-once-in-new", "PRAGMA foreign_keys = ON run once by New, on whichever connection the pool gives it",
		ledger{rowCheck: true, pragmaOnce: true, dsn: dsnWith("?_pragma=busy_timeout(5000)&_txlock=immediate")},
		checks.MissingAccount, []string{"AccountSearch"}},
	// The student leaves the DSN as it is and runs PRAGMA foreign_keys = ON
	// on the pool before each delivery's BEGIN. database/sql gives the
	// BEGIN the connection the PRAGMA just ran on, at every step of every
	// check, races included. But when that connection is found dead at the
	// BEGIN (driver.ErrBadConn, as after the server closed it), database/sql
	// begins again on a new one, on which no PRAGMA ran: a bug that hands
	// the INSERT account 99 then stores a row for an account that does not
	// exist.
	{"missingaccount/pragma-on-the-pool", "PRAGMA foreign_keys = ON run on the pool before each BEGIN, on whichever connection that is",
		ledger{rowCheck: true, pragmaOnPool: true, dsn: dsnWith("?_pragma=busy_timeout(5000)&_txlock=immediate")},
		checks.MissingAccount, []string{"AccountSearch"}},
	// The student puts foreign_keys(1) in the DSN, rightly, and deletes the
	// credit's "changed no row" check as dead code: the foreign key refuses
	// the event's missing account at the INSERT. But a bug that hands the
	// credit's UPDATE a missing account (while the INSERT has the event's)
	// changes no row, and the handler answers applied: an inbox row, no
	// credit. (The same handler is markfirst/credit-inlined: two routes to
	// one mistake.)
	// A blind student's fix (round 1, accepted by the checks of its
	// day): foreign_keys(1) added to the DSN, rightly, but the DSN
	// rewritten as "file:" + path + "?…", without lab.SQLiteFile's
	// escaping. A directory whose name holds a '?' opens another file,
	// the settings cut at the '?' (foreign keys off, and another database);
	// one whose name holds a '#' ends the path there, and two ledgers
	// share one file. Every directory the lab makes for its databases
	// holds both.
	{"missingaccount/dsn-path-unescaped", `foreign_keys(1) in a DSN written "file:" + path + "?…": a '?' or '#' in a directory's name opens another file`,
		ledger{rowCheck: true, dsn: unescapedDSN}, checks.MissingAccount, []string{"UnknownAccount"}},
	// A blind student's fix (round 3's fkcheckpragma, accepted by the
	// check of its day): foreign keys stay off in the DSN, and inside the
	// transaction, after the INSERT adds a row, the handler asks
	// pragma_foreign_key_check('inbox') ("works on every connection") and
	// refuses the event if it finds any row. It finds every orphan row of
	// the table, not only the event's: once one is there (a row left from
	// before, an account deleted with foreign keys off), every new event
	// for every account answers unknown account: an outage.
	{"missingaccount/foreign-key-check-of-the-whole-inbox", "foreign keys off; any row pragma_foreign_key_check('inbox') finds refuses the event: one old orphan row refuses every event",
		ledger{rowCheck: true, fkCheckAll: true, dsn: dsnWith("?_pragma=busy_timeout(5000)&_txlock=immediate")},
		checks.MissingAccount, []string{"AccountSearch"}},
	{"missingaccount/row-check-dropped", "foreign keys on in the DSN, and the credit's check that it changed a row deleted as dead code",
		ledger{}, checks.MissingAccount, []string{"AccountSearch"}},

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
	// The student keeps the check as a fast path, wraps the starting
	// point's credit and INSERT, in that order, in one transaction, and lets
	// the key refuse the loser of a race: its INSERT's UNIQUE violation
	// rolls its credit back, and it compares payloads to answer duplicate or
	// conflict. Every race of the matrix runs on an empty account. On an
	// account where one credit fits under the balance cap and two do not,
	// the loser's credit hits the balance's CHECK before its INSERT reaches
	// the key, and the loser of a race for one event answers "invalid
	// event" instead of duplicate.
	{"checkthenact/loser-refused-by-the-key-after-its-credit", "the check kept as a fast path; the credit, then a plain INSERT in one transaction; a UNIQUE violation rolled back and compared",
		ledger{rowCheck: true, seenOutside: true, effectFirst: true, uniqueCompares: true,
			insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`},
		checks.CheckThenAct, []string{"RaceSearch"}},
	// The same, with INSERT … ON CONFLICT DO NOTHING: no row inserted rolls
	// the credit back, and the loser compares. At the cap its credit fails
	// first, the same way.
	{"checkthenact/loser-rolled-back-after-its-credit", "the check kept as a fast path; the credit, then INSERT … ON CONFLICT DO NOTHING; no row inserted rolls back and compares",
		ledger{rowCheck: true, seenOutside: true, effectFirst: true, uniqueByRows: true}, checks.CheckThenAct, []string{"RaceSearch"}},

	// A blind student's fix (round 3's globlookup, accepted by the check of
	// its day): correct/'s transaction, but the stored payload looked up
	// with GLOB ("case-sensitive, unlike LIKE"), which reads * ? [ in an
	// id as wildcards. evt-1 (500) applied, then evt-? (700) applied; the
	// redelivery of evt-? finds evt-1's row first, and a genuine repeat is
	// answered payload conflict on every retry.
	{"checkthenact/lookup-by-glob", "the stored payload looked up with GLOB: the repeat of evt-? is compared with evt-1's row",
		ledger{rowCheck: true, lookup: `SELECT account_id, amount FROM inbox WHERE source GLOB $1 AND event_id GLOB $2`},
		checks.CheckThenAct, []string{"RaceSearch"}},

	// Exercise 5: one COMMIT.
	{"markfirst/credit-first", "the order swapped: the credit committed first, then the inbox row",
		ledger{effectFirst: true, noTx: true, insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4) ON CONFLICT (source, event_id) DO NOTHING`},
		checks.MarkFirst, []string{"Rollback", "FaultSweep"}},
	{"markfirst/compensating-delete", "two transactions, and a DELETE of the inbox row when the credit fails",
		ledger{compensate: true}, checks.MarkFirst, []string{"FaultSweep", "Crash"}},
	{"markfirst/autocommit-in-order", "no transaction at all, the row and then the credit",
		ledger{noTx: true}, checks.MarkFirst, []string{"Rollback", "FaultSweep"}},
	// The student moves the credit into the transaction by writing the
	// UPDATE inline, tx.ExecContext(ctx, "UPDATE accounts …"), and drops
	// the credit helper with its check that the UPDATE changed a row. One
	// COMMIT: every fault and crash of the matrix leaves all or nothing.
	// But a bug that hands the credit a missing account makes the credit
	// fail (it changes nothing) while the row stays, and the handler
	// commits the row and answers applied.
	{"markfirst/credit-inlined", "one transaction, the credit's UPDATE inlined without its check that it changed a row",
		ledger{}, checks.MarkFirst, []string{"FaultSearch"}},
	// The student knows a failed COMMIT may have committed (lab.Processor's
	// doc says so), and looks: on a COMMIT error it reads the inbox, and a
	// row with its payload means applied. Alone, that is right. But when
	// the same event is delivered twice at once and the first one's COMMIT
	// fails (rolled back), the second takes the lock and commits the row
	// before the first looks: the first answers applied for a credit it
	// did not make, and the event is applied twice in the answers.
	// A blind student's fix of round 3 (round3/a-markfirst__walnockpt.diff):
	// the right transaction, and WAL mode with automatic checkpoints off,
	// "so that no delivery's COMMIT stalls on a checkpoint". While the
	// pool keeps a connection open nothing copies the log back: the -wal
	// file grows with every commit (44 MB per 5,000 deliveries, measured)
	// until the disk is full and every COMMIT fails.
	{"markfirst/wal-without-checkpoints", "the right transaction, with WAL and wal_autocheckpoint(0) in the DSN",
		ledger{dsn: func(path string) string {
			return correct.DSN(path) + "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=wal_autocheckpoint(0)"
		}}, checks.MarkFirst, []string{"Checkpoint"}},
	{"markfirst/failed-commit-looked-up", "one transaction; a failed COMMIT looked up in the inbox, the row there taken for its own",
		ledger{rowCheck: true, commitLookup: true}, checks.MarkFirst, []string{"FaultSearch"}},

	// A blind student's fix (round 1, accepted by the checks of its
	// day): the handler fixed, one transaction for the mark and the credit,
	// and the DSN rewritten as "file:" + path + "?…", as in
	// missingaccount/dsn-path-unescaped.
	{"markfirst/dsn-path-unescaped", `one transaction, and a DSN written "file:" + path + "?…": a '?' or '#' in a directory's name opens another file`,
		ledger{rowCheck: true, dsn: unescapedDSN}, checks.MarkFirst, []string{"Rollback"}},

	// Exercise 6: name the one conflict you expect.
	{"insertorignore/or-replace", "INSERT OR REPLACE instead of OR IGNORE",
		ledger{insert: `INSERT OR REPLACE INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`}, checks.InsertOrIgnore, []string{"DatabaseRefusal", "Duplicate"}},
	{"insertorignore/every-error-is-duplicate", "a plain INSERT, and its error caught and called a duplicate",
		ledger{insert: `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`, anyErrIsDuplicate: true}, checks.InsertOrIgnore, []string{"DatabaseRefusal"}},
	{"insertorignore/raw-errors", "ON CONFLICT on the key, but the refusal returned as it came, not classified",
		ledger{rawErrors: true}, checks.InsertOrIgnore, []string{"DatabaseRefusal"}},
	// The student keeps INSERT OR IGNORE and tells a refused row from a
	// repeat afterwards: no row inserted and no row stored means the schema
	// refused it (invalid event); a stored row means a repeat. The matrix
	// hands amount 0 to new events only, and that passes. A bug that hands
	// a repeat's INSERT amount 0 is ignored, the stored row is found, and
	// the refused row is answered duplicate. A blind student wrote this
	// very fix (checks/testdata/blind/round0, ignore_norows_invalid,
	// accepted by the checks of its day).
	{"insertorignore/no-row-is-invalid", "INSERT OR IGNORE kept; nothing inserted and nothing stored answered invalid event, a stored row duplicate",
		ledger{rowCheck: true, noRowIsInvalid: true,
			insert: `INSERT OR IGNORE INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`},
		checks.InsertOrIgnore, []string{"RefusalSearch"}},
	// The student avoids both OR IGNORE and ON CONFLICT with the classic
	// guarded INSERT … SELECT … WHERE NOT EXISTS. A new event's bad row
	// reaches the schema and is refused. A repeat's row never does: the
	// guard selects nothing, the amount of 0 a bug handed it is never
	// checked, and it is answered duplicate.
	{"insertorignore/insert-where-not-exists", "INSERT … SELECT … WHERE NOT EXISTS: a repeat's row never reaches the schema",
		ledger{rowCheck: true, insert: `INSERT INTO inbox (source, event_id, account_id, amount)
			SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM inbox WHERE source = $1 AND event_id = $2)`},
		checks.InsertOrIgnore, []string{"RefusalSearch"}},
	// A blind student's fix (round 3's everyerrorinvalid, accepted by the
	// check of its day): ON CONFLICT (source, event_id) DO NOTHING as
	// asked, and "name the one conflict, let every other fail" read as:
	// every INSERT error lab.Classify leaves without a kind is the schema
	// refusing the row, an invalid event. A full disk (SQLITE_FULL) or an
	// I/O error at the INSERT of a valid event answers invalid event (400,
	// "retrying cannot help"), and a sender that gives up on it loses the
	// credit.
	{"insertorignore/every-other-error-invalid", "ON CONFLICT on the key, and any other error of the INSERT without a kind answered invalid event: a full disk is the event's fault",
		ledger{rowCheck: true, otherIsInvalid: true}, checks.InsertOrIgnore, []string{"FaultSweep", "RefusalSearch"}},
}
