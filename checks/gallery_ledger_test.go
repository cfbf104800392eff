package checks_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"idemlab/correct"
	"idemlab/lab"
)

// ledger is the correct handler with the knobs a student in a hurry turns:
// each wrong fix of the repair exercises below is correct/ with a few of
// them set. The zero knobs are correct/.
type ledger struct {
	schema func(string) string // rewrites correct.Schema
	dsn    func(path string) string
	insert string // the INSERT into inbox; "" for correct/'s
	lookup string // the SELECT of the stored payload, by source and event_id; "" for correct/'s

	seenOutside       bool // a "seen it?" SELECT before the transaction: found means duplicate
	noTx              bool // every statement on its own (autocommit)
	effectFirst       bool // the credit before the inbox row
	commitBetween     bool // COMMIT between the inbox row and the credit
	uniqueIsDuplicate bool // a UNIQUE violation answered as duplicate
	anyErrIsDuplicate bool // any error of the INSERT answered as duplicate
	noCompare         bool // no payload comparison
	fingerprint       bool // the payloads compared as fmt.Sprintf("%d%d", account, amount): 1 and 23 read as 12 and 3
	rawErrors         bool // errors returned without lab.Classify
	pragmaInTx        bool // PRAGMA foreign_keys = ON inside the transaction
	compensate        bool // two transactions, and a DELETE of the row when the credit fails
	prefixSource      bool // the key folded into event_id: "source:event_id"

	pragmaOnce     bool // PRAGMA foreign_keys = ON run once, on the pool, by New
	pragmaOnPool   bool // PRAGMA foreign_keys = ON run on the pool before each BEGIN
	pragmaOnConn   bool // a connection of its own per delivery (db.Conn): PRAGMA foreign_keys = ON on it, then BEGIN on it
	rowCheck       bool // the credit refuses an UPDATE that changed no row, as correct's does
	uniqueCompares bool // a UNIQUE violation rolled back, then compared on the pool: duplicate or conflict
	commitLookup   bool // a failed COMMIT looked up on the pool: the row there means applied
	noRowIsInvalid bool // the duplicate branch's lookup finding no row answers invalid event
	preReadBalance bool // the balance read on the pool before BEGIN; the credit sets it to that plus the amount
	uniqueByRows   bool // with effectFirst: INSERT … ON CONFLICT DO NOTHING; no row inserted rolls back, then compares on the pool
	keyString      bool // the key in one column, event_key, written and looked up as lab.Key's String: source/event_id
	otherIsInvalid bool // an error of the INSERT that lab.Classify leaves without a kind answered invalid event
	fkCheckAll     bool // after the INSERT adds a row, any row pragma_foreign_key_check('inbox') finds answers unknown account
	sourceCRC      bool // the key (source_crc, event_id), source_crc the source's CRC-32 (IEEE), computed in Go
}

func (l ledger) variant(name string) lab.Variant {
	schema := correct.Schema
	if l.schema != nil {
		schema = l.schema(schema)
	}
	dsn := correct.DSN
	if l.dsn != nil {
		dsn = l.dsn
	}
	return lab.Variant{Name: name, Mistake: "a wrong fix", Schema: schema, DSN: dsn,
		New: func(db *sql.DB) lab.Processor {
			if l.pragmaOnce {
				db.Exec(`PRAGMA foreign_keys = ON`)
			}

			return &ledgerHandler{l, db}
		}}
}

type ledgerHandler struct {
	ledger
	db *sql.DB
}

// execer is a transaction or the pool.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// classify is correct's: lab.Classify, after asking the caller's context
// (a statement that lost the race with database/sql's rollback of a
// cancelled call reports only sql.ErrTxDone).
func (h *ledgerHandler) classify(ctx context.Context, err error) error {
	if h.rawErrors {
		return err
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return lab.Classify(err)
}

func (h *ledgerHandler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	id := e.EventID
	if h.prefixSource {
		id = e.Source + ":" + e.EventID
	}
	insert := h.insert
	if insert == "" {
		insert = `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)
			ON CONFLICT (source, event_id) DO NOTHING`
	}
	lookup := h.lookup
	if lookup == "" {
		lookup = `SELECT account_id, amount FROM inbox WHERE source = $1 AND event_id = $2`
	}
	compare := func(x execer) (lab.Outcome, error) {
		var account, amount int64
		args := []any{e.Source, id}
		switch {
		case h.keyString:
			lookup, args = `SELECT account_id, amount FROM inbox WHERE event_key = $1`, []any{e.Key().String()}
		case h.sourceCRC:
			lookup, args = `SELECT account_id, amount FROM inbox WHERE source_crc = $1 AND event_id = $2`, []any{sourceCRC(e.Source), id}
		}
		if err := x.QueryRowContext(ctx, lookup, args...).Scan(&account, &amount); err != nil {
			if h.noRowIsInvalid && errors.Is(err, sql.ErrNoRows) {
				return 0, fmt.Errorf("%w: the schema refused %s", lab.ErrInvalidEvent, e.Key())
			}
			return 0, h.classify(ctx, err)
		}
		differ := account != e.AccountID || amount != e.Amount
		if h.fingerprint {
			differ = fmt.Sprintf("%d%d", account, amount) != fmt.Sprintf("%d%d", e.AccountID, e.Amount)
		}
		if !h.noCompare && differ {
			return 0, fmt.Errorf("%w: %s", lab.ErrPayloadConflict, e.Key())
		}
		return lab.Duplicate, nil
	}
	if h.seenOutside {
		var n int
		if err := h.db.QueryRowContext(ctx, `SELECT count(*) FROM inbox WHERE source = $1 AND event_id = $2`, e.Source, id).Scan(&n); err != nil {
			return 0, h.classify(ctx, err)
		}
		if n > 0 {
			return compare(h.db)
		}
	}

	var before int64
	if h.preReadBalance {
		if err := h.db.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, e.AccountID).Scan(&before); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, h.classify(ctx, err)
		}
	}
	if h.pragmaOnPool {
		if _, err := h.db.ExecContext(ctx, `PRAGMA foreign_keys = ON`); err != nil {
			return 0, h.classify(ctx, err)
		}
	}
	var x execer = h.db
	var tx *sql.Tx
	beginner := interface {
		BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
	}(h.db)
	if h.pragmaOnConn {
		conn, err := h.db.Conn(ctx)
		if err != nil {
			return 0, h.classify(ctx, err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = ON`); err != nil {
			return 0, h.classify(ctx, err)
		}
		beginner = conn
	}
	if !h.noTx {
		var err error
		if tx, err = beginner.BeginTx(ctx, nil); err != nil {
			return 0, h.classify(ctx, err)
		}
		defer tx.Rollback()
		x = tx
	}
	if h.pragmaInTx {
		if _, err := x.ExecContext(ctx, `PRAGMA foreign_keys = ON`); err != nil {
			return 0, h.classify(ctx, err)
		}
	}
	credit := func() error {
		var res sql.Result
		var err error
		if h.preReadBalance {
			res, err = x.ExecContext(ctx, `UPDATE accounts SET balance = $1 WHERE id = $2`, before+e.Amount, e.AccountID)
		} else {
			res, err = x.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID)
		}
		if err != nil || !h.rowCheck {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
		}
		return nil
	}
	if h.effectFirst {
		if err := credit(); err != nil {
			return 0, h.classify(ctx, err)
		}
	}
	args := []any{e.Source, id, e.AccountID, e.Amount}
	if h.keyString {
		insert = `INSERT INTO inbox (source, event_id, account_id, amount, event_key) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (event_key) DO NOTHING`
		args = append(args, e.Key().String())
	}
	if h.sourceCRC {
		insert = `INSERT INTO inbox (source, event_id, account_id, amount, source_crc) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (source_crc, event_id) DO NOTHING`
		args = append(args, sourceCRC(e.Source))
	}
	res, err := x.ExecContext(ctx, insert, args...)
	var serr *sqlite.Error
	switch {
	case err != nil && h.anyErrIsDuplicate:
		return lab.Duplicate, nil
	case err != nil && h.uniqueIsDuplicate && errors.As(err, &serr) &&
		(serr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || serr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE):
		return lab.Duplicate, nil
	case err != nil && h.uniqueCompares && errors.As(err, &serr) &&
		(serr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || serr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE):
		if tx != nil {
			tx.Rollback()
		}
		return compare(h.db)
	case err != nil && h.otherIsInvalid && lab.ErrorKind(h.classify(ctx, err)) == "other error":
		return 0, fmt.Errorf("%w: refused by the schema: %w", lab.ErrInvalidEvent, h.classify(ctx, err))
	case err != nil:
		return 0, h.classify(ctx, err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if inserted == 0 && h.uniqueByRows {
		tx.Rollback() // the credit made before the INSERT
		return compare(h.db)
	}
	if inserted == 0 {
		o, err := compare(x)
		if err != nil || tx == nil {
			return o, err
		}
		// As correct's: the transaction that found the stored row commits
		// (it wrote nothing), and a failed COMMIT is the delivery's error.
		if err := tx.Commit(); err != nil {
			return 0, h.classify(ctx, err)
		}
		return o, nil
	}
	if h.fkCheckAll {
		var orphans int
		if err := x.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check('inbox')`).Scan(&orphans); err != nil {
			return 0, h.classify(ctx, err)
		}
		if orphans > 0 {
			return 0, fmt.Errorf("%w: the inbox row of %s names a missing account", lab.ErrUnknownAccount, e.Key())
		}
	}
	if h.commitBetween || h.compensate {
		if err := tx.Commit(); err != nil {
			return 0, h.classify(ctx, err)
		}
		x = h.db
	}
	if !h.effectFirst {
		if err := credit(); err != nil {
			if h.compensate {
				h.db.ExecContext(ctx, `DELETE FROM inbox WHERE source = $1 AND event_id = $2`, e.Source, id)
			}
			return 0, h.classify(ctx, err)
		}
	}
	if tx != nil && !h.commitBetween && !h.compensate {
		if err := tx.Commit(); err != nil {
			if h.commitLookup {
				var n int
				if h.db.QueryRowContext(ctx, `SELECT count(*) FROM inbox WHERE source = $1 AND event_id = $2 AND account_id = $3 AND amount = $4`,
					e.Source, id, e.AccountID, e.Amount).Scan(&n) == nil && n == 1 {
					return lab.Applied, nil // the COMMIT made it after all
				}
			}
			return 0, h.classify(ctx, err)
		}
	}
	return lab.Applied, nil
}

// keyColumn gives the inbox one key column, event_key, in place of the
// primary key (source, event_id).
func keyColumn(s string) string {
	return strings.Replace(s, "\tPRIMARY KEY (source, event_id)", "\tevent_key  TEXT    NOT NULL,\n\tPRIMARY KEY (event_key)", 1)
}

// sourceCRC is a source as a key of its CRC-32 (IEEE) holds it.
func sourceCRC(source string) int64 { return int64(crc32.ChecksumIEEE([]byte(source))) }

// crcSourceKey gives the inbox a column source_crc, the source's CRC-32, and
// keys it by (source_crc, event_id).
func crcSourceKey(s string) string {
	s = strings.Replace(s, "\tevent_id   TEXT", "\tsource_crc INTEGER NOT NULL,\n\tevent_id   TEXT", 1)
	return strings.Replace(s, "PRIMARY KEY (source, event_id)", "PRIMARY KEY (source_crc, event_id)", 1)
}

// key rewrites the inbox's primary key.
func key(cols string) func(string) string {
	return func(s string) string {
		return strings.Replace(s, "PRIMARY KEY (source, event_id)", "PRIMARY KEY ("+cols+")", 1)
	}
}

// dsnWith is a DSN on the file at path, escaped as the lab escapes it,
// with only the given query.
func dsnWith(query string) func(string) string {
	return func(path string) string { return lab.SQLiteFile(path) + query }
}

// unescapedDSN is correct's DSN with the path written as it is after
// "file:", unescaped.
func unescapedDSN(path string) string {
	return "file:" + path + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_txlock=immediate"
}
