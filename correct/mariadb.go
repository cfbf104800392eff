package correct

import (
	"context"
	"database/sql"
	"fmt"

	"idemlab/lab"
	"idemlab/mariadb"
)

// This file is the handler in MariaDB's dialect. process.go cannot serve
// MariaDB: go-sql-driver/mysql takes ? placeholders, not $1, and MariaDB
// has no ON CONFLICT. So MariaDBHandler is process.go with those two
// changes and nothing else:
//
//   - INSERT … ON DUPLICATE KEY UPDATE source = source in place of ON
//     CONFLICT DO NOTHING. On a DSN without clientFoundRows it counts 1 row
//     for a new event and 0 for a duplicate, and every other refusal (an
//     unknown account, a NULL, a CHECK, a key too long) is an error that
//     lab.Classify maps. INSERT IGNORE is not used: it turns an unknown
//     account into 0 rows and a warning, the count of a duplicate, and
//     stores a key too long cut short, 1 row;
//   - errors go through mariadb.Wrap before lab.Classify, which reads the
//     server's error number from it.
//
// Run it under mariadb.Retry (MariaDB does): the inbox row's foreign key
// share-locks the account, so two deliveries of different events for one
// account deadlock on their credits, and InnoDB rolls one back (1213).

// MariaDB describes the handler on MariaDB to the lab: MariaDBSchema,
// mariadb.DSN, and MariaDBHandler under mariadb.Retry.
var MariaDB = &lab.MariaDB{
	Schema: MariaDBSchema,
	DSN:    mariadb.DSN,
	New:    func(db *sql.DB) lab.Processor { return mariadb.Retry(NewMariaDB(db)) },
}

// MariaDBSchema is Schema in MariaDB's dialect, one statement each:
// BIGINT for INTEGER, VARCHAR(128) for TEXT (a key needs a length),
// CHAR_LENGTH for length, InnoDB for the transactions and the foreign key.
// The key columns compare byte by byte (utf8mb4_nopad_bin): under the
// server's default collation, utf8mb4_general_ci, 'evt_A' and 'evt_a ' are
// the same key as 'evt_a', and the second event would be answered
// duplicate. The same NOT NULLs, CHECKs, foreign key and primary key.
var MariaDBSchema = []string{`
CREATE TABLE accounts (
	id      BIGINT PRIMARY KEY,
	balance BIGINT NOT NULL DEFAULT 0
	        CHECK (balance BETWEEN 0 AND 1000000000000000)
) ENGINE=InnoDB`, `
CREATE TABLE inbox (
	source     VARCHAR(128) NOT NULL CHECK (CHAR_LENGTH(source) BETWEEN 1 AND 128),
	event_id   VARCHAR(128) NOT NULL CHECK (CHAR_LENGTH(event_id) BETWEEN 1 AND 128),
	account_id BIGINT NOT NULL,
	amount     BIGINT NOT NULL CHECK (amount BETWEEN 1 AND 1000000000),
	PRIMARY KEY (source, event_id),
	FOREIGN KEY (account_id) REFERENCES accounts (id)
) ENGINE=InnoDB CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`}

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
		return 0, classifyMariaDB(ctx, err)
	}
	defer tx.Rollback() // undoes everything unless Commit ran first

	res, err := tx.ExecContext(ctx, `
		INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES (?, ?, ?, ?)
		ON DUPLICATE KEY UPDATE source = source`,
		e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return 0, classifyMariaDB(ctx, err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}

	outcome := lab.Applied
	if inserted == 1 {
		if err := creditMariaDB(ctx, tx, e); err != nil {
			return 0, err
		}
	} else {
		var account, amount int64
		if err := tx.QueryRowContext(ctx, `
			SELECT account_id, amount FROM inbox
			WHERE source = ? AND event_id = ?`,
			e.Source, e.EventID).Scan(&account, &amount); err != nil {
			return 0, classifyMariaDB(ctx, err)
		}
		if account != e.AccountID || amount != e.Amount {
			return 0, fmt.Errorf("%w: %s was applied with account=%d amount=%d, this delivery has account=%d amount=%d",
				lab.ErrPayloadConflict, e.Key(), account, amount, e.AccountID, e.Amount)
		}
		outcome = lab.Duplicate
	}

	if err := classifyMariaDB(ctx, tx.Commit()); err != nil {
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
		return classifyMariaDB(ctx, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
	}
	return nil
}

// classifyMariaDB is classify for the MariaDB driver's errors, whose
// number lab.Classify reads through mariadb.Wrap.
func classifyMariaDB(ctx context.Context, err error) error {
	return classify(ctx, mariadb.Wrap(err))
}
