package scenarios_test

import "strings"

// A mutation is one change a tired developer makes to correct/: the old
// text of file, which must occur there exactly once, replaced by new.
type mutation struct {
	name string // the package, mutants/_generated/<name>; its variant is "mutants/<name>"
	file string // a file of correct/ that the generator copies, other than variant.go
	old  string
	new  string
	why  string // one line: the change and what it does; the variant's Mistake
}

// mutations are the mutants, grouped by the part of correct/ they break.
// Old texts carry as much context as it takes to be unique; they follow
// correct/'s text byte for byte, tabs included.
var mutations = []mutation{
	// Deciding "first time or repeat" from the INSERT.
	{name: "gezero", file: "process.go",
		old: "if inserted == 1 {", new: "if inserted >= 0 {",
		why: "`inserted == 1` → `inserted >= 0`: every delivery credits"},
	{name: "nezero", file: "process.go",
		old: "if inserted == 1 {", new: "if inserted != 0 {",
		why: "`inserted == 1` → `inserted != 0`"},
	{name: "rowsignored", file: "process.go",
		old: "inserted, err := res.RowsAffected()", new: "inserted, _ := res.RowsAffected()",
		why: "the inbox INSERT's RowsAffected error ignored"},
	{name: "notarget", file: "process.go",
		old: "ON CONFLICT (source, event_id) DO NOTHING", new: "ON CONFLICT DO NOTHING",
		why: "ON CONFLICT without a target"},
	{name: "alwaysapplied", file: "process.go",
		old: "outcome = lab.Duplicate", new: "outcome = lab.Applied",
		why: "`outcome = lab.Duplicate` → `outcome = lab.Applied`: a repeat answered applied"},

	// The payload comparison of a repeat.
	{name: "andconflict", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if account != e.AccountID && amount != e.Amount {",
		why: "`||` → `&&` in the payload comparison: a conflict only when both fields differ"},
	{name: "amountonly", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if amount != e.Amount {",
		why: "payload comparison on the amount only"},
	{name: "accountonly", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if account != e.AccountID {",
		why: "payload comparison on the account only"},
	{name: "crossfield", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if account != e.AccountID || amount != e.AccountID {",
		why: "the stored amount compared with the delivery's account id"},
	{name: "conflictnowrap", file: "process.go",
		old: `fmt.Errorf("%w: %s was applied`, new: `fmt.Errorf("%v: %s was applied`,
		why: "the payload-conflict error formatted with `%v` instead of `%w`"},
	{name: "lookupnosource", file: "process.go",
		old: "WHERE source = $1 AND event_id = $2`,\n\t\t\te.Source, e.EventID)",
		new: "WHERE event_id = $1`,\n\t\t\te.EventID)",
		why: "the stored payload looked up by event_id alone, without the source"},
	{name: "lookupswap", file: "process.go",
		old: "e.Source, e.EventID).Scan(", new: "e.EventID, e.Source).Scan(",
		why: "lookup arguments swapped: source and event_id"},

	// The key, normalised on its way in: two keys a byte apart become one.
	// Old texts that span from the imports to Process add an import and
	// its one use, which gen's single replacement cannot do apart.
	{name: "lowerid", file: "process.go",
		old: "VALUES ($1, $2, $3, $4)", new: "VALUES ($1, lower($2), $3, $4)",
		why: "the event id stored as `lower($2)`: keys that differ only by case become one"},
	{name: "lowerlookup", file: "process.go",
		old: "WHERE source = $1 AND event_id = $2`", new: "WHERE source = $1 AND lower(event_id) = lower($2)`",
		why: "the stored payload looked up by `lower(event_id) = lower($2)`: a repeat may be compared with another event's row"},
	{name: "trimid", file: "process.go",
		old: "VALUES ($1, $2, $3, $4)", new: "VALUES ($1, trim($2), $3, $4)",
		why: "the event id stored as `trim($2)`: keys that differ only by leading or trailing spaces become one"},
	{name: "lowersource", file: "process.go",
		old: "VALUES ($1, $2, $3, $4)", new: "VALUES (lower($1), $2, $3, $4)",
		why: "the source stored as `lower($1)`: sources that differ only by case become one"},
	{name: "nocase", file: "schema.go",
		old: "event_id   TEXT    NOT NULL CHECK", new: "event_id   TEXT    NOT NULL COLLATE NOCASE CHECK",
		why: "`COLLATE NOCASE` on inbox.event_id: the key compares ASCII letters without case"},
	{name: "golower", file: "process.go",
		old: processHead,
		new: withImport(`"strings"`) + "\te.EventID = strings.ToLower(e.EventID)\n",
		why: "`e.EventID = strings.ToLower(e.EventID)` first thing in Process: keys that differ only by case become one"},
	{name: "gotrim", file: "process.go",
		old: processHead,
		new: withImport(`"strings"`) + "\te.EventID = strings.TrimSpace(e.EventID)\n",
		why: "`e.EventID = strings.TrimSpace(e.EventID)` first thing in Process: keys that differ only by surrounding whitespace become one"},
	{name: "nfcid", file: "process.go",
		old: processHead,
		new: withImport(`"golang.org/x/text/unicode/norm"`) + "\te.EventID = norm.NFC.String(e.EventID)\n",
		why: "`e.EventID = norm.NFC.String(e.EventID)` first thing in Process: keys that differ only by Unicode normal form become one"},

	// The payload compared through a lossy encoding: two payloads it maps
	// to one value pass for a repeat.
	{name: "floatcompare", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if float64(account) != float64(e.AccountID) || float64(amount) != float64(e.Amount) {",
		why: "payload compared as float64: account ids above 2^53 that differ by one compare equal"},
	{name: "int32compare", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if int32(account) != int32(e.AccountID) || int32(amount) != int32(e.Amount) {",
		why: "payload compared as int32: account ids that differ by a multiple of 2^32 compare equal"},
	{name: "int32amount", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if account != e.AccountID || int32(amount) != int32(e.Amount) {",
		why: "the amount compared as int32"},
	{name: "float32amount", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if account != e.AccountID || float32(amount) != float32(e.Amount) {",
		why: "the amount compared as float32: amounts above 2^24 a few units apart compare equal (999999999 and 1000000000)"},
	{name: "sprintcompare", file: "process.go",
		old: "if account != e.AccountID || amount != e.Amount {", new: "if fmt.Sprintf(\"%d/%.6g\", account, float64(amount)) != fmt.Sprintf(\"%d/%.6g\", e.AccountID, float64(e.Amount)) {",
		why: "payload compared as `fmt.Sprintf(\"%d/%.6g\")`, the amount rounded to 6 digits: 999999999 and 1000000000 compare equal"},

	// The credit (the credit helper).
	{name: "debit", file: "process.go",
		old: "SET balance = balance + $1", new: "SET balance = balance - $1",
		why: "`balance + $1` → `balance - $1`"},
	{name: "swapargs", file: "process.go",
		old: "e.Amount, e.AccountID)", new: "e.AccountID, e.Amount)",
		why: "UPDATE arguments swapped: amount and account id"},
	{name: "wrongid", file: "process.go",
		old: "e.Amount, e.AccountID)", new: "e.Amount, e.Amount)",
		why: "`WHERE id = ?` bound to the amount instead of the account id"},
	{name: "idge", file: "process.go",
		old: "WHERE id = $2", new: "WHERE id >= $2",
		why: "`WHERE id = $2` → `WHERE id >= $2`: the credit lands on this account and every later one"},
	{name: "creditnocheck", file: "process.go",
		old: "if n, err := res.RowsAffected(); err != nil || n != 1 {", new: "if _, err := res.RowsAffected(); err != nil {",
		why: "credit's `n != 1` check dropped: an UPDATE that changed no row answers applied"},
	{name: "creditzero", file: "process.go",
		old: "err != nil || n != 1 {", new: "err != nil || n == 0 {",
		why: "credit's `n != 1` → `n == 0`: only an UPDATE of no row is refused"},
	{name: "creditpool", file: "process.go",
		old: "credit(ctx, tx, e)", new: "credit(ctx, h.db, e)",
		why: "credit called on the pool instead of the transaction"},

	// Transaction boundaries.
	{name: "begin", file: "process.go",
		old: "h.db.BeginTx(ctx, nil)", new: "h.db.Begin()",
		why: "`h.db.BeginTx(ctx, nil)` → `h.db.Begin()`: the caller's context not passed to BEGIN"},
	{name: "norollback", file: "process.go",
		old: "\tdefer tx.Rollback() // undoes everything unless Commit ran first\n", new: "",
		why: "`defer tx.Rollback()` dropped"},
	{name: "defercommit", file: "process.go",
		old: "defer tx.Rollback()", new: "defer tx.Commit()",
		why: "`defer tx.Rollback()` → `defer tx.Commit()`"},
	{name: "commitignored", file: "process.go",
		old: "if err := commit(ctx, tx); err != nil {\n\t\treturn 0, err\n\t}", new: "commit(ctx, tx)",
		why: "the COMMIT error ignored"},
	{name: "commitnoctx", file: "process.go",
		old: "return classify(ctx, tx.Commit())", new: "return lab.Classify(tx.Commit())",
		why: "commit classifies without asking the caller's context: a COMMIT after the caller gave up answers sql.ErrTxDone"},
	{name: "commitdirect", file: "process.go",
		old: "if err := commit(ctx, tx); err != nil {\n\t\treturn 0, err\n\t}",
		new: "if err := tx.Commit(); err != nil {\n\t\treturn 0, lab.Classify(err)\n\t}",
		why: "tx.Commit() and lab.Classify called directly, bypassing the commit helper"},

	// Errors answered as duplicates.
	{name: "dupinvalid", file: "process.go",
		old: "if err := e.Validate(); err != nil {\n\t\treturn 0, err", new: "if err := e.Validate(); err != nil {\n\t\treturn lab.Duplicate, nil",
		why: "an invalid event answered `return lab.Duplicate, nil`"},
	{name: "dupbegin", file: "process.go",
		old: "from the DSN\n\tif err != nil {\n\t\treturn 0, lab.Classify(err)", new: "from the DSN\n\tif err != nil {\n\t\treturn lab.Duplicate, nil",
		why: "a failed BEGIN answered `return lab.Duplicate, nil`"},
	{name: "dupinsert", file: "process.go",
		old: "e.AccountID, e.Amount)\n\tif err != nil {\n\t\treturn 0, classify(ctx, err)", new: "e.AccountID, e.Amount)\n\tif err != nil {\n\t\treturn lab.Duplicate, nil",
		why: "a failed inbox INSERT answered `return lab.Duplicate, nil`"},
	{name: "duplookup", file: "process.go",
		old: ".Scan(&account, &amount); err != nil {\n\t\t\treturn 0, classify(ctx, err)", new: ".Scan(&account, &amount); err != nil {\n\t\t\treturn lab.Duplicate, nil",
		why: "a failed lookup of the stored payload answered `return lab.Duplicate, nil`"},
	{name: "dupupdate", file: "process.go",
		old: "if err := credit(ctx, tx, e); err != nil {\n\t\t\treturn 0, err", new: "if err := credit(ctx, tx, e); err != nil {\n\t\t\treturn lab.Duplicate, nil",
		why: "a failed credit answered `return lab.Duplicate, nil`"},
	{name: "dupcommit", file: "process.go",
		old: "if err := commit(ctx, tx); err != nil {\n\t\treturn 0, err", new: "if err := commit(ctx, tx); err != nil {\n\t\treturn lab.Duplicate, nil",
		why: "a failed COMMIT answered `return lab.Duplicate, nil`"},

	// Errors left unclassified.
	{name: "noclassbegin", file: "process.go",
		old: "from the DSN\n\tif err != nil {\n\t\treturn 0, lab.Classify(err)", new: "from the DSN\n\tif err != nil {\n\t\treturn 0, err",
		why: "lab.Classify dropped on the BEGIN error path"},
	{name: "noclassinsert", file: "process.go",
		old: "e.AccountID, e.Amount)\n\tif err != nil {\n\t\treturn 0, classify(ctx, err)", new: "e.AccountID, e.Amount)\n\tif err != nil {\n\t\treturn 0, err",
		why: "classify dropped on the inbox INSERT error path"},
	{name: "noclasslookup", file: "process.go",
		old: ".Scan(&account, &amount); err != nil {\n\t\t\treturn 0, classify(ctx, err)", new: ".Scan(&account, &amount); err != nil {\n\t\t\treturn 0, err",
		why: "classify dropped on the lookup error path"},
	{name: "noclassupdate", file: "process.go",
		old: "e.Amount, e.AccountID)\n\tif err != nil {\n\t\treturn classify(ctx, err)", new: "e.Amount, e.AccountID)\n\tif err != nil {\n\t\treturn err",
		why: "classify dropped on the credit UPDATE's error path (in credit)"},
	{name: "noclasscommit", file: "process.go",
		old: "return classify(ctx, tx.Commit())", new: "return tx.Commit()",
		why: "classify dropped on the COMMIT error path (in commit)"},

	// Validation.
	{name: "novalidate", file: "process.go",
		old: "\tif err := e.Validate(); err != nil {\n\t\treturn 0, err\n\t}\n\n", new: "",
		why: "the `e.Validate()` call removed"},

	// The schema.
	{name: "amountzero", file: "schema.go",
		old: "CHECK (amount BETWEEN 1 AND", new: "CHECK (amount BETWEEN 0 AND",
		why: "amount CHECK `BETWEEN 1` → `BETWEEN 0`"},
	{name: "amountcapup", file: "schema.go",
		old: "AND 1000000000)", new: "AND 1000000001)",
		why: "amount CHECK cap off by one upwards (1000000001)"},
	{name: "amountcapdown", file: "schema.go",
		old: "AND 1000000000)", new: "AND 999999999)",
		why: "amount CHECK cap off by one downwards (999999999)"},
	{name: "balancecapup", file: "schema.go",
		old: "AND 1000000000000000)", new: "AND 1000000000000001)",
		why: "balance CHECK cap off by one upwards"},
	{name: "balancecapdown", file: "schema.go",
		old: "AND 1000000000000000)", new: "AND 999999999999999)",
		why: "balance CHECK cap off by one downwards"},
	{name: "keylen0", file: "schema.go",
		old: "CHECK (octet_length(source) BETWEEN 1 AND", new: "CHECK (octet_length(source) BETWEEN 0 AND",
		why: "source length CHECK `BETWEEN 1` → `BETWEEN 0`"},
	{name: "keylen127", file: "schema.go",
		old: "CHECK (octet_length(event_id) BETWEEN 1 AND 128)", new: "CHECK (octet_length(event_id) BETWEEN 1 AND 127)",
		why: "event_id length CHECK cap 128 → 127"},
	{name: "sourcenull", file: "schema.go",
		old: "source     TEXT    NOT NULL CHECK", new: "source     TEXT    CHECK",
		why: "NOT NULL dropped from inbox.source"},
	{name: "nulleventid", file: "schema.go",
		old: "event_id   TEXT    NOT NULL CHECK", new: "event_id   TEXT    CHECK",
		why: "NOT NULL dropped from inbox.event_id"},
	{name: "nullaccount", file: "schema.go",
		old: "account_id INTEGER NOT NULL REFERENCES", new: "account_id INTEGER REFERENCES",
		why: "NOT NULL dropped from inbox.account_id: a NULL account escapes the foreign key"},
	{name: "nullamount", file: "schema.go",
		old: "amount     INTEGER NOT NULL CHECK", new: "amount     INTEGER CHECK",
		why: "NOT NULL dropped from inbox.amount: a NULL amount passes its CHECK"},
	{name: "nullbalance", file: "schema.go",
		old: "balance INTEGER NOT NULL DEFAULT 0", new: "balance INTEGER DEFAULT 0",
		why: "NOT NULL dropped from accounts.balance: a credit of NULL makes the balance NULL, which passes its CHECK"},
	{name: "unboundedsource", file: "schema.go",
		old: "CHECK (octet_length(source) BETWEEN 1 AND 128)", new: "CHECK (octet_length(source) >= 1)",
		why: "source length CHECK without its upper bound"},
	{name: "unboundedid", file: "schema.go",
		old: "CHECK (octet_length(event_id) BETWEEN 1 AND 128)", new: "CHECK (octet_length(event_id) >= 1)",
		why: "event_id length CHECK without its upper bound"},
	{name: "emptyid", file: "schema.go",
		old: "CHECK (octet_length(event_id) BETWEEN 1 AND", new: "CHECK (octet_length(event_id) BETWEEN 0 AND",
		why: "event_id length CHECK `BETWEEN 1` → `BETWEEN 0`"},
	{name: "unboundedamount", file: "schema.go",
		old: "CHECK (amount BETWEEN 1 AND 1000000000)", new: "CHECK (amount >= 1)",
		why: "amount CHECK without its upper bound"},
	{name: "balancefloor", file: "schema.go",
		old: "CHECK (balance BETWEEN 0 AND 1000000000000000)", new: "CHECK (balance <= 1000000000000000)",
		why: "balance CHECK without its lower bound: a balance may go negative"},
	{name: "nostrict", file: "schema.go",
		old: "\tPRIMARY KEY (source, event_id)\n) STRICT;", new: "\tPRIMARY KEY (source, event_id)\n);",
		why: "STRICT dropped from the inbox table"},
	{name: "noreferences", file: "schema.go",
		old: " REFERENCES accounts (id),", new: ",",
		why: "REFERENCES accounts (id) dropped"},
	{name: "uniquekey", file: "schema.go",
		old: "PRIMARY KEY (source, event_id)", new: "UNIQUE (source, event_id)",
		why: "`PRIMARY KEY (source, event_id)` → `UNIQUE (source, event_id)`"},

	// The DSN.
	{name: "busy0", file: "schema.go",
		old: "_pragma=busy_timeout(5000)", new: "_pragma=busy_timeout(0)",
		why: "DSN busy_timeout(5000) → busy_timeout(0)"},
	{name: "nofkdsn", file: "schema.go",
		old: "?_pragma=foreign_keys(1)&", new: "?",
		why: "DSN without `_pragma=foreign_keys(1)`"},
	{name: "notxlock", file: "schema.go",
		old: "&_txlock=immediate\"", new: "\"",
		why: "DSN without `_txlock=immediate` (plain BEGIN, INSERT first)"},
	{name: "journalmemory", file: "schema.go",
		old: "_pragma=busy_timeout(5000)&", new: "_pragma=busy_timeout(5000)&_pragma=journal_mode(MEMORY)&",
		why: "DSN with `_pragma=journal_mode(MEMORY)`: the rollback journal kept in RAM"},
	{name: "journaloff", file: "schema.go",
		old: "_pragma=busy_timeout(5000)&", new: "_pragma=busy_timeout(5000)&_pragma=journal_mode(OFF)&",
		why: "DSN with `_pragma=journal_mode(OFF)`: no rollback journal"},
	{name: "syncoff", file: "schema.go",
		old: "_pragma=busy_timeout(5000)&", new: "_pragma=busy_timeout(5000)&_pragma=synchronous(OFF)&",
		why: "DSN with `_pragma=synchronous(OFF)`: COMMIT never syncs"},
	{name: "walnormal", file: "schema.go",
		old: "_pragma=busy_timeout(5000)&", new: "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&",
		why: "DSN with `journal_mode(WAL)` and `synchronous(NORMAL)`: COMMIT syncs the WAL only at a checkpoint"},
	{name: "noescape", file: "schema.go",
		old: "lab.SQLiteFile(path)", new: `lab.SQLiteFile("") + path`,
		why: "DSN path not escaped: `lab.SQLiteFile(path)` → `lab.SQLiteFile(\"\") + path`, \"file:\" and the path as it is"},
	{name: "charlength", file: "schema.go",
		old: "CHECK (octet_length(event_id) BETWEEN 1 AND 128)", new: "CHECK (length(event_id) BETWEEN 1 AND 128)",
		why: "the event id's CHECK counts characters, not bytes: `octet_length` → `length`"},
}

// processHead is correct/process.go from its last import to the line that
// opens Process's body, byte for byte: the old text of the mutations that
// add an import and a statement at the top of Process (withImport).
const processHead = `	"idemlab/lab"
)

// Handler applies credit events to the accounts of one database.
type Handler struct {
	db *sql.DB
}

// New returns a handler over db, which must have been opened with DSN.
func New(db *sql.DB) *Handler { return &Handler{db: db} }

var _ lab.Processor = (*Handler)(nil)

// Process applies e at most once. It answers lab.Applied the first time,
// lab.Duplicate for a repeat with the same payload, and an error otherwise;
// after an error nothing was committed.
func (h *Handler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
`

// withImport is processHead with path imported after idemlab/lab.
func withImport(path string) string {
	return strings.Replace(processHead, "\t\"idemlab/lab\"\n)", "\t\"idemlab/lab\"\n\t"+path+"\n)", 1)
}
