package replay

import (
	"context"
	"database/sql"
	"fmt"

	"idemlab/exercises/replay"
	"idemlab/lab"
)

// Handler applies credit events and answers with receipts.
type Handler struct {
	db *sql.DB
}

// New returns a handler over db, which must have been opened with DSN.
func New(db *sql.DB) *Handler { return &Handler{db: db} }

// Process applies e at most once and returns its receipt; a repeat gets the
// receipt of the first delivery, read from the inbox row that remembers it.
func (h *Handler) Process(ctx context.Context, e lab.Event) (replay.Receipt, error) {
	if err := e.Validate(); err != nil {
		return replay.Receipt{}, err
	}

	tx, err := h.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, from the DSN
	if err != nil {
		return replay.Receipt{}, lab.Classify(err)
	}
	defer tx.Rollback()

	// The balance after is not known yet: 0 until the UPDATE below tells.
	res, err := tx.ExecContext(ctx, `
		INSERT INTO inbox (source, event_id, account_id, amount, balance_after)
		VALUES ($1, $2, $3, $4, 0)
		ON CONFLICT (source, event_id) DO NOTHING`,
		e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return replay.Receipt{}, lab.Classify(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return replay.Receipt{}, err
	}

	receipt := replay.Receipt{Outcome: lab.Applied}
	if inserted == 1 {
		if err := tx.QueryRowContext(ctx, `
			UPDATE accounts SET balance = balance + $1 WHERE id = $2
			RETURNING balance`,
			e.Amount, e.AccountID).Scan(&receipt.Balance); err != nil {
			return replay.Receipt{}, lab.Classify(err)
		}
		if _, err := tx.ExecContext(ctx, `
			UPDATE inbox SET balance_after = $1 WHERE source = $2 AND event_id = $3`,
			receipt.Balance, e.Source, e.EventID); err != nil {
			return replay.Receipt{}, lab.Classify(err)
		}
	} else {
		var account, amount int64
		if err := tx.QueryRowContext(ctx, `
			SELECT account_id, amount, balance_after FROM inbox
			WHERE source = $1 AND event_id = $2`,
			e.Source, e.EventID).Scan(&account, &amount, &receipt.Balance); err != nil {
			return replay.Receipt{}, lab.Classify(err)
		}
		if account != e.AccountID || amount != e.Amount {
			return replay.Receipt{}, fmt.Errorf("%w: %s was applied with account=%d amount=%d, this delivery has account=%d amount=%d",
				lab.ErrPayloadConflict, e.Key(), account, amount, e.AccountID, e.Amount)
		}
		receipt.Outcome = lab.Duplicate // with the balance_after of the first delivery
	}

	if err := tx.Commit(); err != nil {
		if ctx.Err() != nil { // the caller gave up: see correct.commit
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return replay.Receipt{}, lab.Classify(err)
	}
	return receipt, nil
}
