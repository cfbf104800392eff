package checks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
)

// What exercise 11's searches draw (see NewVariant): handlers that do what
// correct/ does, and rewordings of the student's variant that do what it
// does. Each is a composition of harmless changes, and the zero of every
// choice is no change, so that rapid, shrinking a story, drops every
// change the failure does not need: the story names what is left.

// A correctDraw is a handler that does what correct/ does: correct's
// transaction with some of the legitimate choices of ../equivalent, its
// SQL, schema and errors in other words, under some label, on a pool of
// some shape. Its zero value is correct/ itself, on the lab's pool.
type correctDraw struct {
	// How it does it (the Fair search draws these; each is an equivalent
	// of ../equivalent, whose doc says why it changes nothing).
	readFirst      bool // the stored row read before the INSERT (equivalent/readfirst)
	untargeted     bool // ON CONFLICT DO NOTHING without a target (equivalent/untargeted)
	commitMismatch bool // COMMIT, not ROLLBACK, before a payload conflict (equivalent/commitmismatch)
	poolReads      bool // SELECT 1, a PRAGMA, a balance read and a ping on the pool first (equivalent/poolping)
	mutex          bool // every delivery behind one mutex, the variant's in the process (equivalent/mutex)
	plainBegin     bool // a plain BEGIN: no _txlock (equivalent/plainbegin); never with readFirst or accountFirst
	wal            bool // journal_mode=WAL (equivalent/wal)
	accountFirst   bool // the account looked up first, in the transaction: a missing one is unknown before the inbox is read
	shape          poolShape

	// Its words (both searches draw these).
	sql          sqlWords
	schema       schemaWords
	rewordErrors bool // each error of the same kinds, in other words (RewordedErrors)
	label        drawnLabel
}

// sqlWords is how correct's SQL is written: each choice says the same to
// SQLite.
type sqlWords struct {
	lower   bool     // keywords in lower case
	params  int      // 0: $1…; 1: ?1…; 2: anonymous ?, in order; 3: named (:source…)
	columns [4]uint8 // the INSERT's columns, a permutation of source, event_id, account_id, amount (zero: as correct/ has them)
	swap    bool     // the SELECT's columns, the WHERE's conditions, the conflict target and the sum in the other order
	alias   bool     // the SELECT reads FROM inbox AS i, each column named i.…
	oneLine bool     // each statement on one line
}

// schemaWords is how correct's schema is written: the same tables and
// constraints, and what a schema that serves other code may add.
type schemaWords struct {
	extended    bool // an unused nullable column and a column with a default in each table, an index on inbox (account_id) (ExtendedSchema)
	keyReversed bool // the inbox's key declared (event_id, source)
	unique      bool // the key declared UNIQUE, not PRIMARY KEY (its columns are NOT NULL)
	reworded    bool // every word in the other case, no comments, other line breaks (rewordSchema)
}

// A drawnLabel is the name and mistake a drawn handler is given.
type drawnLabel int

// The labels a search draws.
const (
	labelCorrect    drawnLabel = iota // correct/'s: "correct", no mistake
	labelAsVariant                    // the student's variant's name (with " (correct/'s handler)") and mistake
	labelUnlabelled                   // a number, no mistake
)

// columnNames are the inbox's columns as correct's INSERT names them.
var columnNames = [4]string{"source", "event_id", "account_id", "amount"}

// insertOrders are the orders of the INSERT's columns a search draws,
// correct's first.
var insertOrders = [][4]uint8{{0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}, {1, 2, 0, 3}}

// drawCorrect draws a handler that does what correct/ does: with how, the
// ways of doing it and the pool's shape too; else correct's transaction
// on the lab's pool, in other words.
func drawCorrect(t *rapid.T, how bool) correctDraw {
	var d correctDraw
	if how {
		d.readFirst = rapid.Bool().Draw(t, "read first")
		d.untargeted = rapid.Bool().Draw(t, "no conflict target")
		d.commitMismatch = rapid.Bool().Draw(t, "commit before a conflict")
		d.poolReads = rapid.Bool().Draw(t, "reads on the pool first")
		d.mutex = rapid.Bool().Draw(t, "behind a mutex")
		plainBegin := rapid.Bool().Draw(t, "plain BEGIN")
		d.wal = rapid.Bool().Draw(t, "WAL")
		d.accountFirst = rapid.Bool().Draw(t, "account first")
		// Drawn whatever was drawn before, so that the draws that follow
		// stay where rapid's shrinking looks for them; never with a read
		// before the first write, which a plain BEGIN cannot upgrade
		// (naive/deferred).
		d.plainBegin = plainBegin && !d.readFirst && !d.accountFirst
		d.shape = rapid.SampledFrom([]poolShape{0, 1, 2}).Draw(t, "pool")
	}
	d.sql = sqlWords{
		lower:   rapid.Bool().Draw(t, "lower-case keywords"),
		params:  rapid.IntRange(0, 3).Draw(t, "parameters"),
		columns: rapid.SampledFrom(insertOrders).Draw(t, "INSERT's columns"),
		swap:    rapid.Bool().Draw(t, "other orders"),
		alias:   rapid.Bool().Draw(t, "alias"),
		oneLine: rapid.Bool().Draw(t, "one line"),
	}
	d.schema = schemaWords{
		extended:    rapid.Bool().Draw(t, "schema extended"),
		keyReversed: rapid.Bool().Draw(t, "key reversed"),
		unique:      rapid.Bool().Draw(t, "key UNIQUE"),
		reworded:    rapid.Bool().Draw(t, "schema reworded"),
	}
	d.rewordErrors = rapid.Bool().Draw(t, "errors reworded")
	d.label = drawnLabel(rapid.IntRange(0, 2).Draw(t, "label"))
	return d
}

// String names what d changes of correct/, for a story: "correct/'s
// handler, unchanged" when nothing.
func (d correctDraw) String() string {
	var what []string
	add := func(on bool, s string) {
		if on {
			what = append(what, s)
		}
	}
	add(d.readFirst, "reads the stored row before the INSERT")
	add(d.untargeted, "ON CONFLICT without a target")
	add(d.commitMismatch, "COMMIT before it answers a payload conflict")
	add(d.poolReads, "SELECT 1, PRAGMA foreign_keys, a balance read and a ping on the pool before it begins")
	add(d.mutex, "every delivery behind one mutex")
	add(d.plainBegin, "a plain BEGIN (no _txlock)")
	add(d.wal, "journal_mode=WAL")
	add(d.accountFirst, "looks the account up first, in its transaction")
	add(d.sql.lower, "SQL keywords in lower case")
	add(d.sql.params > 0, []string{"", "parameters ?1…", "anonymous parameters ?", "named parameters :source…"}[d.sql.params])
	if d.sql.columns != insertOrders[0] && d.sql.columns != [4]uint8{} {
		var cols []string
		for _, c := range d.sql.columns {
			cols = append(cols, columnNames[c])
		}
		what = append(what, "the INSERT's columns ("+strings.Join(cols, ", ")+")")
	}
	add(d.sql.swap, "the SELECT's columns, the conditions, the conflict target and the sum in the other order")
	add(d.sql.alias, "the SELECT reads FROM inbox AS i")
	add(d.sql.oneLine, "each statement on one line")
	add(d.schema.extended, "its schema extended (unused columns, a column with a default, an index on inbox (account_id))")
	add(d.schema.keyReversed, "the inbox's key declared (event_id, source)")
	add(d.schema.unique, "the inbox's key declared UNIQUE, not PRIMARY KEY")
	add(d.schema.reworded, "its schema's text reworded (case, line breaks, no comments)")
	add(d.rewordErrors, "its errors' words changed")
	add(d.label == labelAsVariant, "labelled as your variant is")
	add(d.label == labelUnlabelled, "unlabelled")
	s := "correct/'s handler, unchanged"
	if len(what) > 0 {
		s = "correct/'s handler with: " + strings.Join(what, "; ")
	}
	return s + ", on " + d.shape.String()
}

// variant is d as the lab runs it; v is the student's variant, whose
// label d may carry. The name says what probes for Go locks must tell
// apart (see labtest's golock.go): the label, and, through the code of
// New, whether d takes a mutex.
func (d correctDraw) variant(v lab.Variant) lab.Variant {
	out := lab.Variant{Name: "correct/ drawn", Schema: d.schema.apply(correct.Schema), DSN: d.dsn}
	switch d.label {
	case labelAsVariant:
		out.Name, out.Mistake = v.Name+" (correct/'s handler)", v.Mistake
	case labelUnlabelled:
		out.Name = fmt.Sprintf("variant %08x, unlabelled", crc32.ChecksumIEEE([]byte("correct/ drawn")))
	}
	newHandler := func(db *sql.DB) lab.Processor {
		db.SetMaxOpenConns(int(d.shape))
		var h lab.Processor = &drawnHandler{db: db, d: d, sql: d.sql.statements(d.untargeted)}
		if d.rewordErrors {
			h = rewordingErrors{h}
		}
		return h
	}
	if d.mutex {
		lock := new(sync.Mutex)
		out.New = func(db *sql.DB) lab.Processor { return lockedHandler{newHandler(db), lock} }
	} else {
		out.New = func(db *sql.DB) lab.Processor { return newHandler(db) }
	}
	return out
}

// dsn is correct's DSN with d's settings.
func (d correctDraw) dsn(path string) string {
	dsn := correct.DSN(path)
	if d.plainBegin {
		dsn = strings.Replace(dsn, "&_txlock=immediate", "", 1)
	}
	if d.wal {
		dsn += "&_pragma=journal_mode(WAL)"
	}
	return dsn
}

// apply writes schema, correct's, as w says.
func (w schemaWords) apply(schema string) string {
	if w.extended {
		schema = extendSchema(schema)
	}
	key := "PRIMARY KEY (source, event_id)"
	cols := "(source, event_id)"
	if w.keyReversed {
		cols = "(event_id, source)"
	}
	if w.unique {
		schema = strings.Replace(schema, key, "UNIQUE "+cols, 1)
	} else {
		schema = strings.Replace(schema, key, "PRIMARY KEY "+cols, 1)
	}
	if w.reworded {
		schema = rewordSchema(schema)
	}
	return schema
}

// lockedHandler runs each delivery of its handler behind lock, which
// every handler of its variant in the process shares, as equivalent/mutex
// does. (Not one lock for every drawn variant: the lab probes variants
// for Go locks at once, and one probe's delivery would wait for
// another's.)
type lockedHandler struct {
	inner lab.Processor
	lock  *sync.Mutex
}

func (h lockedHandler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	return h.inner.Process(ctx, e)
}

// A statement is one statement of a drawn handler: its text, and the
// order in which it takes the event's fields (indexes into columnNames:
// source, event_id, account_id, amount).
type statement struct {
	text   string
	fields []int
	named  bool // its parameters are named for their fields
}

// args returns the statement's arguments for e.
func (s statement) args(e lab.Event) []any {
	values := [4]any{e.Source, e.EventID, e.AccountID, e.Amount}
	var out []any
	for _, f := range s.fields {
		if s.named {
			out = append(out, sql.Named(columnNames[f], values[f]))
		} else {
			out = append(out, values[f])
		}
	}
	return out
}

// drawnStatements are a drawn handler's three statements.
type drawnStatements struct {
	insert, read, credit statement
}

// statements writes correct's statements as w says; untargeted drops the
// conflict target.
func (w sqlWords) statements(untargeted bool) drawnStatements {
	kw := func(s string) string {
		if w.lower {
			return strings.ToLower(s)
		}
		return s
	}
	// A parameter is written as a marker first: positional parameters ($1,
	// ?1) are numbered once the statement's fields are known, each field
	// by its place among them in the event's order.
	param := func(f int) string { return fmt.Sprintf("\x00%d\x00", f) }
	take := func(lines ...string) statement {
		sep := "\n\t\t"
		if w.oneLine {
			sep = " "
		}
		text := strings.Join(lines, sep)
		var used, inOrder []int // the fields the statement takes: in the event's order, in the statement's
		for f := range 4 {
			if strings.Contains(text, param(f)) {
				used = append(used, f)
			}
		}
		for rest := text; ; {
			i := strings.IndexByte(rest, 0)
			if i < 0 {
				break
			}
			f := int(rest[i+1] - '0')
			inOrder = append(inOrder, f)
			rest = rest[i+3:]
		}
		s := statement{fields: used, named: w.params == 3}
		if w.params == 2 {
			s.fields = inOrder
		}
		for f := range 4 {
			var p string
			switch w.params {
			case 0:
				p = fmt.Sprintf("$%d", slices.Index(used, f)+1)
			case 1:
				p = fmt.Sprintf("?%d", slices.Index(used, f)+1)
			case 2:
				p = "?"
			case 3:
				p = ":" + columnNames[f]
			}
			text = strings.ReplaceAll(text, param(f), p)
		}
		s.text = text
		return s
	}
	var ds drawnStatements

	cols := w.columns
	if cols == [4]uint8{} {
		cols = insertOrders[0]
	}
	var names, values []string
	for _, c := range cols {
		names = append(names, columnNames[c])
		values = append(values, param(int(c)))
	}
	target := " (source, event_id)"
	if w.swap {
		target = " (event_id, source)"
	}
	if untargeted {
		target = ""
	}
	ds.insert = take(kw("INSERT INTO")+" inbox ("+strings.Join(names, ", ")+")",
		kw("VALUES")+" ("+strings.Join(values, ", ")+")",
		kw("ON CONFLICT")+target+" "+kw("DO NOTHING"))

	col := func(c string) string {
		if w.alias {
			return "i." + c
		}
		return c
	}
	from := "inbox"
	if w.alias {
		from = "inbox " + kw("AS") + " i"
	}
	selected := col("account_id") + ", " + col("amount")
	conds := []string{col("source") + " = " + param(0), col("event_id") + " = " + param(1)}
	if w.swap {
		selected = col("amount") + ", " + col("account_id")
		conds = []string{col("event_id") + " = " + param(1), col("source") + " = " + param(0)}
	}
	ds.read = take(kw("SELECT")+" "+selected+" "+kw("FROM")+" "+from, kw("WHERE")+" "+strings.Join(conds, " "+kw("AND")+" "))

	var sum string
	if w.swap {
		sum = param(3) + " + balance"
	} else {
		sum = "balance + " + param(3)
	}
	ds.credit = take(kw("UPDATE") + " accounts " + kw("SET") + " balance = " + sum + " " + kw("WHERE") + " id = " + param(2))
	return ds
}

// drawnHandler is correct's Process as a correctDraw writes it.
type drawnHandler struct {
	db  *sql.DB
	d   correctDraw
	sql drawnStatements
}

func (h *drawnHandler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	if h.d.poolReads {
		// As equivalent/poolping: statements that decide nothing, on the
		// pool, before the transaction takes a connection.
		var fk, balance int64
		if _, err := h.db.ExecContext(ctx, `SELECT 1`); err != nil {
			return 0, lab.Classify(err)
		}
		if err := h.db.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil {
			return 0, lab.Classify(err)
		}
		if err := h.db.QueryRowContext(ctx, `SELECT coalesce(max(balance), 0) FROM accounts WHERE id = $1`, e.AccountID).Scan(&balance); err != nil {
			return 0, lab.Classify(err)
		}
		if err := h.db.PingContext(ctx); err != nil {
			return 0, lab.Classify(err)
		}
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback()

	if h.d.accountFirst {
		// A missing account is answered before the inbox is read: an
		// error that writes nothing, as the key's check would give
		// (scenarios/repeat.go: a handler may check the account first).
		var exists int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE id = $1`, e.AccountID).Scan(&exists); err != nil {
			return 0, rewordedClassify(ctx, err)
		}
		if exists == 0 {
			return 0, fmt.Errorf("%w: account %d does not exist", lab.ErrUnknownAccount, e.AccountID)
		}
	}
	var account, amount int64
	read := func() error {
		s := h.sql.read
		dest := []any{&account, &amount}
		if h.d.sql.swap {
			dest = []any{&amount, &account}
		}
		return tx.QueryRowContext(ctx, s.text, s.args(e)...).Scan(dest...)
	}
	stored := false
	if h.d.readFirst {
		switch err := read(); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return 0, rewordedClassify(ctx, err)
		default:
			stored = true
		}
	}
	if !stored {
		res, err := tx.ExecContext(ctx, h.sql.insert.text, h.sql.insert.args(e)...)
		if err != nil {
			return 0, rewordedClassify(ctx, err)
		}
		inserted, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		switch {
		case inserted == 1:
			res, err := tx.ExecContext(ctx, h.sql.credit.text, h.sql.credit.args(e)...)
			if err != nil {
				return 0, rewordedClassify(ctx, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return 0, fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
			}
		case h.d.readFirst:
			return 0, fmt.Errorf("%s appeared in the inbox inside the transaction", e.Key())
		default:
			if err := read(); err != nil {
				return 0, rewordedClassify(ctx, err)
			}
			stored = true
		}
	}
	outcome := lab.Applied
	if stored {
		if account != e.AccountID || amount != e.Amount {
			if h.d.commitMismatch {
				if err := rewordedClassify(ctx, tx.Commit()); err != nil {
					return 0, err
				}
			}
			return 0, fmt.Errorf("%w: %s was applied with account=%d amount=%d, this delivery has account=%d amount=%d",
				lab.ErrPayloadConflict, e.Key(), account, amount, e.AccountID, e.Amount)
		}
		outcome = lab.Duplicate
	}
	if err := rewordedClassify(ctx, tx.Commit()); err != nil {
		return 0, err
	}
	return outcome, nil
}

// drawnHoldTheMatrix is how many drawn handlers TestDrawnCorrectHoldsTheMatrix
// runs the matrix on: the first examples of the Fair search's generator,
// and one with every change at once.
var drawnHoldTheMatrix = 5

// TestDrawnCorrectHoldsTheMatrix holds the handlers the Fair search draws
// to what they are for: each gives every column of the matrix correct/'s
// verdict, or it is no test of a scenario's fairness. It runs in the full
// suite.
func TestDrawnCorrectHoldsTheMatrix(t *testing.T) {
	if !labtest.FullSuite() {
		t.Skipf("the quick suite: %s=1 runs drawn handlers on every column", labtest.FullEnv)
	}
	useLabDefaults()
	gen := rapid.Custom(func(t *rapid.T) correctDraw { return drawCorrect(t, true) })
	draws := []correctDraw{{readFirst: true, untargeted: true, commitMismatch: true, poolReads: true, mutex: true, wal: true, accountFirst: true, shape: 1,
		sql:    sqlWords{lower: true, params: 2, columns: insertOrders[3], swap: true, alias: true, oneLine: true},
		schema: schemaWords{extended: true, keyReversed: true, unique: true, reworded: true}, rewordErrors: true, label: labelUnlabelled}}
	for i := range drawnHoldTheMatrix {
		draws = append(draws, gen.Example(i))
	}
	ofCorrect := map[string]func(t *testing.T) *report.Cell{}
	for _, sc := range scenarios.All {
		var once sync.Once
		var cell *report.Cell
		ofCorrect[sc.Name] = func(t *testing.T) *report.Cell {
			once.Do(func() { cell = labtest.RunCell(t, sc, correct.Variant) })
			return cell
		}
	}
	for i, d := range draws {
		v := d.variant(lab.Variant{Name: "checks/drawn"})
		for _, sc := range scenarios.All {
			t.Run(fmt.Sprintf("%d/%s", i, sc.Name), func(t *testing.T) {
				t.Parallel()
				got, want := labtest.RunCell(t, sc, v), ofCorrect[sc.Name](t)
				if want == nil {
					t.Fatalf("RunCell(%s, correct) gave no verdict (the lab stopped the test that ran it)", sc.Name)
				}
				if got.Pass != want.Pass || !slices.Equal(got.Failures, want.Failures) || got.IsNeutral() != want.IsNeutral() {
					t.Errorf("RunCell(%s, %s) = %v %q (%s), want correct/'s %v %q (%s)\n%s", sc.Name, d,
						got.Pass, got.Failures, got.Neutral, want.Pass, want.Failures, want.Neutral, got.Transcript)
				}
			})
		}
	}
}
