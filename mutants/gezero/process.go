package gezero

import (
	"context"
	"database/sql"
	"fmt"

	"idemlab/lab"
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
	if err := e.Validate(); err != nil {
		return 0, err
	}

	tx, err := h.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, from the DSN
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback() // undoes everything unless Commit ran first

	res, err := tx.ExecContext(ctx, `
		INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (source, event_id) DO NOTHING`,
		e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, lab.Classify(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}

	outcome := lab.Applied
	if inserted >= 0 {
		if _, err := tx.ExecContext(ctx, `
			UPDATE accounts SET balance = balance + ? WHERE id = ?`,
			e.Amount, e.AccountID); err != nil {
			return 0, lab.Classify(err)
		}
	} else {
		var account, amount int64
		if err := tx.QueryRowContext(ctx, `
			SELECT account_id, amount FROM inbox
			WHERE source = ? AND event_id = ?`,
			e.Source, e.EventID).Scan(&account, &amount); err != nil {
			return 0, lab.Classify(err)
		}
		if account != e.AccountID || amount != e.Amount {
			return 0, fmt.Errorf("%w: %s was applied with account=%d amount=%d, this delivery has account=%d amount=%d",
				lab.ErrPayloadConflict, e.Key(), account, amount, e.AccountID, e.Amount)
		}
		outcome = lab.Duplicate
	}

	if err := tx.Commit(); err != nil {
		return 0, lab.Classify(err)
	}
	return outcome, nil
}
