package insertorreplace

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	"idemlab/lab"
)

// PostgresSchema is Schema in PostgreSQL's dialect. BIGINT where SQLite
// says INTEGER (PostgreSQL's integer is 32 bits); no STRICT, because
// PostgreSQL's columns keep their types anyway; the same NOT NULLs, CHECKs,
// foreign key and primary key.
const PostgresSchema = `
CREATE TABLE accounts (
	id      BIGINT PRIMARY KEY,
	balance BIGINT NOT NULL DEFAULT 0
	        CHECK (balance BETWEEN 0 AND 1000000000000000)
);

CREATE TABLE inbox (
	source     TEXT   NOT NULL CHECK (length(source) BETWEEN 1 AND 128),
	event_id   TEXT   NOT NULL CHECK (length(event_id) BETWEEN 1 AND 128),
	account_id BIGINT NOT NULL REFERENCES accounts (id),
	amount     BIGINT NOT NULL CHECK (amount BETWEEN 1 AND 1000000000),
	PRIMARY KEY (source, event_id)
);
`

// PostgresDSN returns the connection string for the database at server
// (a postgres:// URL), with the handler's settings as run-time parameters,
// which PostgreSQL applies to every connection:
//
//   - default_transaction_isolation: the level every BEGIN gets. The
//     handler holds at each of them; at REPEATABLE READ and SERIALIZABLE a
//     delivery racing an uncommitted copy of itself fails with 40001, and
//     Retry runs it again;
//   - lock_timeout = 2s: wait at most that long for a row another delivery
//     holds, then fail with 55P03 (busy, never duplicate);
//   - statement_timeout = 5s: no statement runs longer.
//
// The timeouts are the server's on purpose: pgx answers a cancelled
// context by closing the connection, which is a blunter tool.
func PostgresDSN(server string, level lab.Isolation) string {
	u, err := url.Parse(server)
	if err != nil {
		return server // pgx reports the malformed string itself
	}
	q := u.Query()
	q.Set("default_transaction_isolation", string(level))
	q.Set("lock_timeout", "2s")
	q.Set("statement_timeout", "5s")
	// A space must be %20: pgx does not read a + in a query as a space.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// PostgresHandler is Handler on PostgreSQL, which does not parse INSERT OR
// REPLACE. Its INSERT is what PostgreSQL offers in its place, ON CONFLICT
// (source, event_id) DO UPDATE overwriting the stored account and amount:
// like REPLACE it reports one row changed whether the key was new or not,
// so every repeat is credited again and a repeat with another payload
// overwrites the first. Its Process is Handler's with that one statement
// changed.
type PostgresHandler struct{ Handler }

// NewPostgres returns a handler over db, which must have been opened with
// PostgresDSN.
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
