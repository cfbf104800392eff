package checks_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"idemlab/checks"
	"idemlab/exercises/repeatableread"
	"idemlab/lab"
	"idemlab/mariadb"
)

// Exercise 12's wrong fixes: each starts from exercises/repeatableread
// (check-then-act in one transaction, on MariaDB at REPEATABLE READ) and
// changes what a student in a hurry changes. Each runs under mariadb.Retry,
// as the starting point does, so that what the check rejects is the fix,
// not a missing retry.
var repeatableReadFixes = []struct {
	name string
	why  string
	fix  rrFix
	by   []string
}{
	{"upsert-count-without-compare", "the check kept, the upsert's count read: 0 rows answered duplicate without comparing the stored payload",
		rrFix{readFirst: true, zeroIsDuplicate: true}, []string{"ConflictRace"}},
	{"duplicate-key-as-duplicate", "the check kept, a plain INSERT, and its duplicate-key error (1062) answered duplicate",
		rrFix{readFirst: true, plainInsert: true}, []string{"ConflictRace"}},
	{"insert-ignore", "no check: INSERT IGNORE first, 0 rows read as a repeat and the stored payload compared: a missing account's 0 rows too",
		rrFix{ignore: true}, []string{"UnknownAccount"}},
	{"client-found-rows", "no check: the upsert first and its count read, on a DSN with clientFoundRows=true, which counts a repeat as 1 row",
		rrFix{foundRows: true}, []string{"Race", "Duplicate"}},
}

// TestGalleryRepeatableRead: exercise 12's check rejects each wrong fix,
// by the guarantee expected. Without IDEMLAB_MARIADB it skips (TestMain
// has said so).
func TestGalleryRepeatableRead(t *testing.T) {
	for _, w := range repeatableReadFixes {
		t.Run(w.name, func(t *testing.T) {
			reject(t, checks.RepeatableRead, w.fix.variant("gallery/repeatableread/"+w.name), w.by)
		})
	}
}

// rrFix is exercises/repeatableread's handler with one wrong fix, chosen
// by its fields.
type rrFix struct {
	readFirst       bool // keep the starting point's "seen it?" check
	zeroIsDuplicate bool // answer the upsert's 0 rows duplicate, comparing nothing
	plainInsert     bool // INSERT without ON DUPLICATE KEY UPDATE; 1062 is a duplicate
	ignore          bool // INSERT IGNORE, its 0 rows a repeat to compare
	foundRows       bool // clientFoundRows=true in the DSN
	db              *sql.DB
}

// variant is the fix as the lab runs it: on MariaDB only, under
// mariadb.Retry.
func (f rrFix) variant(name string) lab.Variant {
	dsn := mariadb.DSN
	if f.foundRows {
		dsn = func(server string, level lab.Isolation) string {
			cfg, err := mysql.ParseDSN(mariadb.DSN(server, level))
			if err != nil {
				panic(err)
			}
			cfg.ClientFoundRows = true
			return cfg.FormatDSN()
		}
	}
	return lab.Variant{Name: name, Mistake: "a wrong fix", MariaDB: &lab.MariaDB{
		Schema: repeatableread.Schema,
		DSN:    dsn,
		New: func(db *sql.DB) lab.Processor {
			h := f
			h.db = db
			return mariadb.Retry(h)
		},
	}}
}

// Process is the starting point's Process with the fix's changes.
func (f rrFix) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, mariadb.Classify(ctx, err)
	}
	defer tx.Rollback()

	stored := func() (lab.Outcome, error) {
		var account, amount int64
		if err := tx.QueryRowContext(ctx, `SELECT account_id, amount FROM inbox WHERE source = ? AND event_id = ?`,
			e.Source, e.EventID).Scan(&account, &amount); err != nil {
			return 0, mariadb.Classify(ctx, err)
		}
		if account != e.AccountID || amount != e.Amount {
			return 0, fmt.Errorf("%w: %s was applied with account=%d amount=%d", lab.ErrPayloadConflict, e.Key(), account, amount)
		}
		return lab.Duplicate, nil
	}
	if f.readFirst {
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM inbox WHERE source = ? AND event_id = ?`,
			e.Source, e.EventID).Scan(&n); err != nil {
			return 0, mariadb.Classify(ctx, err)
		}
		if n > 0 {
			return f.commit(ctx, tx, stored)
		}
	}

	insert := `INSERT INTO inbox (source, event_id, account_id, amount) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE source = source`
	switch {
	case f.plainInsert:
		insert = `INSERT INTO inbox (source, event_id, account_id, amount) VALUES (?, ?, ?, ?)`
	case f.ignore:
		insert = `INSERT IGNORE INTO inbox (source, event_id, account_id, amount) VALUES (?, ?, ?, ?)`
	}
	res, err := tx.ExecContext(ctx, insert, e.Source, e.EventID, e.AccountID, e.Amount)
	var me *mysql.MySQLError
	if f.plainInsert && errors.As(err, &me) && me.Number == 1062 {
		return lab.Duplicate, nil // someone else inserted it: a repeat
	}
	if err != nil {
		return 0, mariadb.Classify(ctx, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, err
	} else if n == 0 {
		if f.zeroIsDuplicate {
			return f.commit(ctx, tx, func() (lab.Outcome, error) { return lab.Duplicate, nil })
		}
		return f.commit(ctx, tx, stored)
	}
	res, err = tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = ?`, e.Amount, e.AccountID)
	if err != nil {
		return 0, mariadb.Classify(ctx, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return 0, fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
	}
	return f.commit(ctx, tx, func() (lab.Outcome, error) { return lab.Applied, nil })
}

// commit decides the answer with answer, then commits.
func (f rrFix) commit(ctx context.Context, tx *sql.Tx, answer func() (lab.Outcome, error)) (lab.Outcome, error) {
	o, err := answer()
	if err != nil {
		return 0, err
	}
	if err := mariadb.Classify(ctx, tx.Commit()); err != nil {
		return 0, err
	}
	return o, nil
}
