package forupdate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"idemlab/lab"
	"idemlab/mariadb"
)

// This file is the handler in MariaDB's dialect (its schema is in
// mariadbschema.go). process.go cannot serve MariaDB: go-sql-driver/mysql
// takes ? placeholders, not $1, and MariaDB has no ON CONFLICT. So MariaDBHandler is process.go with those two
// changes and nothing else:
//
//   - INSERT … ON DUPLICATE KEY UPDATE source = source in place of ON
//     CONFLICT DO NOTHING. On a DSN without clientFoundRows it counts 1 row
//     for a new event and 0 for a duplicate, and every other refusal (an
//     unknown account, a NULL, a CHECK, a key too long) is an error that
//     lab.Classify maps. INSERT IGNORE is not used: it turns an unknown
//     account into 0 rows and a warning, the count of a duplicate, and
//     stores a key too long cut short, 1 row;
//   - errors are classified by mariadb.Classify, which is classify for the
//     MariaDB driver's errors: lab.Classify reads the server's error number
//     through mariadb.Wrap.
//
// Run it under mariadb.Retry (MariaDB does): the inbox row's foreign key
// share-locks the account, so two deliveries of different events for one
// account deadlock on their credits, and InnoDB rolls one back (1213).

// MariaDBHandler applies credit events to the accounts of one MariaDB
// database.
type MariaDBHandler struct {
	db *sql.DB
}

// NewMariaDB returns a handler over db, which must have been opened with
// mariadb.DSN.
func NewMariaDB(db *sql.DB) *MariaDBHandler { return &MariaDBHandler{db: db} }

var _ lab.Processor = (*MariaDBHandler)(nil)

// Process applies e at most once, as Handler.Process does.
func (h *MariaDBHandler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}

	tx, err := h.db.BeginTx(ctx, nil) // at the DSN's tx_isolation
	if err != nil {
		return 0, mariadb.Classify(ctx, err)
	}
	defer tx.Rollback() // undoes everything unless Commit ran first

	var account, amount int64
	err = tx.QueryRowContext(ctx, `
		SELECT account_id, amount FROM inbox
		WHERE source = ? AND event_id = ? FOR UPDATE`,
		e.Source, e.EventID).Scan(&account, &amount)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, mariadb.Classify(ctx, err)
	}

	outcome := lab.Applied
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO inbox (source, event_id, account_id, amount)
			VALUES (?, ?, ?, ?)
			ON DUPLICATE KEY UPDATE source = source`,
			e.Source, e.EventID, e.AccountID, e.Amount); err != nil {
			return 0, mariadb.Classify(ctx, err)
		}
		if err := creditMariaDB(ctx, tx, e); err != nil {
			return 0, err
		}
	} else {
		if account != e.AccountID || amount != e.Amount {
			return 0, fmt.Errorf("%w: %s was applied with account=%d amount=%d, this delivery has account=%d amount=%d",
				lab.ErrPayloadConflict, e.Key(), account, amount, e.AccountID, e.Amount)
		}
		outcome = lab.Duplicate
	}

	if err := mariadb.Classify(ctx, tx.Commit()); err != nil {
		return 0, err
	}
	return outcome, nil
}

// creditMariaDB is credit in MariaDB's dialect.
func creditMariaDB(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, e lab.Event) error {
	res, err := db.ExecContext(ctx, `
		UPDATE accounts SET balance = balance + ? WHERE id = ?`,
		e.Amount, e.AccountID)
	if err != nil {
		return mariadb.Classify(ctx, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
	}
	return nil
}
