package mutex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"idemlab/lab"
)

// Handler applies credit events to the accounts of one database.
type Handler struct {
	db *sql.DB
}

// New returns a handler over db, which must have been opened with DSN.
func New(db *sql.DB) *Handler { return &Handler{db: db} }

var _ lab.Processor = (*Handler)(nil)

// processLock is held by every delivery of the process, of any handler,
// for the whole of its Process.
var processLock sync.Mutex

// Process applies e at most once. It answers lab.Applied the first time,
// lab.Duplicate for a repeat with the same payload, and an error otherwise;
// after an error nothing was committed.
func (h *Handler) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	processLock.Lock()
	defer processLock.Unlock()

	tx, err := h.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, from the DSN
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback() // undoes everything unless Commit ran first

	res, err := tx.ExecContext(ctx, `
		INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (source, event_id) DO NOTHING`,
		e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, classify(ctx, err)
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
			return 0, classify(ctx, err)
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

// credit adds e's amount to its account, on the transaction (or, for a
// handler that writes outside one, on the pool). The foreign key already
// refused an event for a missing account; an UPDATE that still changes no
// row means the database does not enforce it (a connection without
// foreign_keys), and the event must not be answered "applied" for a credit
// that went nowhere.
func credit(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, e lab.Event) error {
	res, err := db.ExecContext(ctx, `
		UPDATE accounts SET balance = balance + $1 WHERE id = $2`,
		e.Amount, e.AccountID)
	if err != nil {
		return classify(ctx, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
	}
	return nil
}

// commit commits tx and classifies its error as classify does.
func commit(ctx context.Context, tx *sql.Tx) error {
	return classify(ctx, tx.Commit())
}

// classify is lab.Classify for the error of a statement run with ctx. A
// caller who gave up leaves database/sql to roll the transaction back on a
// goroutine of its own: a statement that loses the race with that rollback,
// COMMIT included, reports only that the transaction is already done
// (sql.ErrTxDone), and pgx answers driver.ErrBadConn for a statement it did
// not send because its context was done. Either would read as "other
// error". The caller's context says what happened: the answer is busy.
func classify(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return lab.Classify(err)
}
