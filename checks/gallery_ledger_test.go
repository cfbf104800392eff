package checks_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	rawErrors         bool // errors returned without lab.Classify
	pragmaInTx        bool // PRAGMA foreign_keys = ON inside the transaction
	compensate        bool // two transactions, and a DELETE of the row when the credit fails
	prefixSource      bool // the key folded into event_id: "source:event_id"
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
		New: func(db *sql.DB) lab.Processor { return &ledgerHandler{l, db} }}
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

func (h *ledgerHandler) classify(err error) error {
	if h.rawErrors {
		return err
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
		if err := x.QueryRowContext(ctx, lookup, e.Source, id).Scan(&account, &amount); err != nil {
			return 0, h.classify(err)
		}
		if !h.noCompare && (account != e.AccountID || amount != e.Amount) {
			return 0, fmt.Errorf("%w: %s", lab.ErrPayloadConflict, e.Key())
		}
		return lab.Duplicate, nil
	}
	if h.seenOutside {
		var n int
		if err := h.db.QueryRowContext(ctx, `SELECT count(*) FROM inbox WHERE source = $1 AND event_id = $2`, e.Source, id).Scan(&n); err != nil {
			return 0, h.classify(err)
		}
		if n > 0 {
			return compare(h.db)
		}
	}

	var x execer = h.db
	var tx *sql.Tx
	if !h.noTx {
		var err error
		if tx, err = h.db.BeginTx(ctx, nil); err != nil {
			return 0, h.classify(err)
		}
		defer tx.Rollback()
		x = tx
	}
	if h.pragmaInTx {
		if _, err := x.ExecContext(ctx, `PRAGMA foreign_keys = ON`); err != nil {
			return 0, h.classify(err)
		}
	}
	credit := func() error {
		_, err := x.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID)
		return err
	}
	if h.effectFirst {
		if err := credit(); err != nil {
			return 0, h.classify(err)
		}
	}
	res, err := x.ExecContext(ctx, insert, e.Source, id, e.AccountID, e.Amount)
	var serr *sqlite.Error
	switch {
	case err != nil && h.anyErrIsDuplicate:
		return lab.Duplicate, nil
	case err != nil && h.uniqueIsDuplicate && errors.As(err, &serr) &&
		(serr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || serr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE):
		return lab.Duplicate, nil
	case err != nil:
		return 0, h.classify(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if inserted == 0 {
		return compare(x)
	}
	if h.commitBetween || h.compensate {
		if err := tx.Commit(); err != nil {
			return 0, h.classify(err)
		}
		x = h.db
	}
	if !h.effectFirst {
		if err := credit(); err != nil {
			if h.compensate {
				h.db.ExecContext(ctx, `DELETE FROM inbox WHERE source = $1 AND event_id = $2`, e.Source, id)
			}
			return 0, h.classify(err)
		}
	}
	if tx != nil && !h.commitBetween && !h.compensate {
		if err := tx.Commit(); err != nil {
			return 0, h.classify(err)
		}
	}
	return lab.Applied, nil
}

// key rewrites the inbox's primary key.
func key(cols string) func(string) string {
	return func(s string) string {
		return strings.Replace(s, "PRIMARY KEY (source, event_id)", "PRIMARY KEY ("+cols+")", 1)
	}
}

// dsnWith is a DSN with only the given query.
func dsnWith(query string) func(string) string {
	return func(path string) string { return "file:" + path + query }
}
