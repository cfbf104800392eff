package repeatableread

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"idemlab/lab"
	"idemlab/mariadb"
)

// Handler applies credit events to the accounts of one MariaDB database.
type Handler struct {
	db *sql.DB
}

// New returns a handler over db, which must have been opened with
// mariadb.DSN.
func New(db *sql.DB) *Handler { return &Handler{db: db} }

var _ lab.Processor = (*Handler)(nil)

// Process applies e at most once: a new event is credited and answered
// applied, a repeat with the same account and amount is answered
// duplicate, and one with another account or amount is a payload
// conflict.
func (h *Handler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
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
		WHERE source = ? AND event_id = ?`,
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
		res, err := tx.ExecContext(ctx, `
			UPDATE accounts SET balance = balance + ? WHERE id = ?`,
			e.Amount, e.AccountID)
		if err != nil {
			return 0, mariadb.Classify(ctx, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return 0, fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
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
