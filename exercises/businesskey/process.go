package businesskey

import (
	"context"
	"database/sql"
	"fmt"

	"idemlab/lab"
)

// Payment is a "payment succeeded" webhook: order OrderID was paid Amount.
type Payment struct {
	Source, EventID, OrderID string
	Amount                   int64
}

// Handler activates paid orders.
type Handler struct {
	db *sql.DB
}

// New returns a handler over db, which must have been opened with DSN.
func New(db *sql.DB) *Handler { return &Handler{db: db} }

// Process records the payment event and activates its order: lab.Applied
// when it activated the order, lab.Duplicate when it did nothing.
func (h *Handler) Process(ctx context.Context, p Payment) (lab.Outcome, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback()

	res, err := tx.ExecContext(ctx, `
		INSERT INTO inbox (source, event_id, order_id, amount)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (source, event_id) DO NOTHING`,
		p.Source, p.EventID, p.OrderID, p.Amount)
	if err != nil {
		return 0, lab.Classify(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	outcome := lab.Duplicate
	if inserted == 1 {
		if _, err := tx.ExecContext(ctx, `
			UPDATE orders SET activations = activations + 1 WHERE id = $1`,
			p.OrderID); err != nil {
			return 0, lab.Classify(err)
		}
		outcome = lab.Applied
	}
	if err := commit(ctx, tx); err != nil {
		return 0, err
	}
	return outcome, nil
}

// commit commits tx. A caller who gave up first leaves database/sql to roll
// the transaction back on its own, and Commit may then report only that
// the transaction is already done (sql.ErrTxDone), which would read as
// "other error". The caller's context says what happened: the answer is
// busy, and nothing was committed.
func commit(ctx context.Context, tx *sql.Tx) error {
	if err := tx.Commit(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return lab.Classify(err)
	}
	return nil
}
