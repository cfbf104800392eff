package insertorreplace

import (
	"context"
	"database/sql"
	"fmt"

	"idemlab/lab"
)

// PostgresHandler is Handler on PostgreSQL, which does not parse INSERT OR
// REPLACE. Its INSERT is what PostgreSQL offers in its place, ON CONFLICT
// (source, event_id) DO UPDATE overwriting the stored account and amount:
// like REPLACE it reports one row changed whether the key was new or not,
// so every repeat is credited again and a repeat with another payload
// overwrites the first. Its Process is Handler's with that one statement
// changed.
type PostgresHandler struct{ Handler }

// NewPostgres returns a handler over db, which must have been opened with
// postgres.DSN.
func NewPostgres(db *sql.DB) *PostgresHandler { return &PostgresHandler{Handler{db: db}} }

// Process is Handler.Process with PostgreSQL's upsert.
func (h *PostgresHandler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}

	tx, err := h.db.BeginTx(ctx, nil) // a plain BEGIN: PostgreSQL has no other
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback() // undoes everything unless Commit ran first

	res, err := tx.ExecContext(ctx, `
		INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (source, event_id) DO UPDATE
		SET account_id = excluded.account_id, amount = excluded.amount`,
		e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, lab.Classify(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}

	outcome := lab.Applied
	if inserted == 1 {
		if err := credit(ctx, tx, e); err != nil {
			return 0, err
		}
	} else {
		var account, amount int64
		if err := tx.QueryRowContext(ctx, `
			SELECT account_id, amount FROM inbox
			WHERE source = $1 AND event_id = $2`,
			e.Source, e.EventID).Scan(&account, &amount); err != nil {
			return 0, lab.Classify(err)
		}
		if account != e.AccountID || amount != e.Amount {
			return 0, fmt.Errorf("%w: %s was applied with account=%d amount=%d, this delivery has account=%d amount=%d",
				lab.ErrPayloadConflict, e.Key(), account, amount, e.AccountID, e.Amount)
		}
		outcome = lab.Duplicate
	}

	if err := commit(ctx, tx); err != nil {
		return 0, err
	}
	return outcome, nil
}
