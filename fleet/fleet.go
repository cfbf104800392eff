// Package fleet runs the kit's handlers the way a deployment does: several
// OS processes, each with a pool of its own, sharing one PostgreSQL inbox.
// Its tests start the processes, send a burst of signed deliveries to
// several of them at once, kill some with SIGKILL on the way, and count.
//
// Two shapes are served:
//
//   - inline: the receiver runs correct's handler (inbox row and credit
//     in one transaction) before it answers;
//   - queued, "acknowledge fast, process later": the receiver writes the
//     inbox row and a job row in one transaction and answers at once
//     (Enqueuer); workers claim jobs with FOR UPDATE SKIP LOCKED and
//     apply each credit in the transaction that deletes its job (Worker).
//
// Either way the inbox's primary key decides which delivery of an event
// counts, and a process killed mid-transaction leaves nothing behind: the
// server rolls its transaction back when the connection drops.
//
// The inline shape runs on MariaDB too, one receiver per node of a Galera
// cluster, each with correct's MariaDB handler on its own node
// (RoleInlineMariaDB, mariadb_test.go): there the cluster's certification, not
// a lock wait, decides between two deliveries on different nodes, and the
// loser's 1213 is run again by correct's retry.
//
// It also holds the live demonstration behind cmd/receiver and
// cmd/provider (demo.go): one receiver on SQLite and providers that send
// it signed deliveries, a process each, run by hand.
package fleet

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"idemlab/lab"
)

// QueueSchema adds the job table of the queued shape to correct's
// PostgresSchema. A job names an inbox row; it exists from the moment the
// event is accepted until the transaction that credits it commits.
const QueueSchema = `
CREATE TABLE jobs (
	id       BIGSERIAL PRIMARY KEY,
	source   TEXT NOT NULL,
	event_id TEXT NOT NULL,
	UNIQUE (source, event_id),
	FOREIGN KEY (source, event_id) REFERENCES inbox (source, event_id)
);
`

// Enqueuer is the receiving half of the queued shape: a lab.Processor that
// accepts an event by writing its inbox row and its job in one transaction.
// Its Applied means "accepted, durably": the credit follows, once, from a
// Worker. A repeat is a Duplicate (or a payload conflict, as in correct),
// and adds no job.
type Enqueuer struct {
	DB *sql.DB
}

var _ lab.Processor = Enqueuer{}

// Process accepts e at most once.
func (q Enqueuer) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	tx, err := q.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `
		INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES ($1, $2, $3, $4)
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
	if inserted == 1 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO jobs (source, event_id) VALUES ($1, $2)`,
			e.Source, e.EventID); err != nil {
			return 0, lab.Classify(err)
		}
	} else {
		var account, amount int64
		if err := tx.QueryRowContext(ctx, `
			SELECT account_id, amount FROM inbox WHERE source = $1 AND event_id = $2`,
			e.Source, e.EventID).Scan(&account, &amount); err != nil {
			return 0, lab.Classify(err)
		}
		if account != e.AccountID || amount != e.Amount {
			return 0, fmt.Errorf("%w: %s was accepted with account=%d amount=%d, this delivery has account=%d amount=%d",
				lab.ErrPayloadConflict, e.Key(), account, amount, e.AccountID, e.Amount)
		}
		outcome = lab.Duplicate
	}
	if err := tx.Commit(); err != nil {
		return 0, lab.Classify(err)
	}
	return outcome, nil
}

// Worker is the processing half of the queued shape.
type Worker struct {
	DB *sql.DB
	// Idle is how long Run waits before it looks for jobs again when it
	// found none; 0 means 5 ms. (A deployment would LISTEN for a NOTIFY
	// from the enqueuing transaction; polling keeps the lesson short.)
	Idle time.Duration
}

// Step claims one job, credits its event and deletes the job, all in one
// transaction, and reports whether there was a job to claim. FOR UPDATE
// SKIP LOCKED hands every worker a different job: a job another worker
// holds is passed over, not waited for. If the worker dies before COMMIT,
// the server rolls the transaction back and the job is claimable again; if
// it dies after, the job is gone with the credit made. Either way the
// credit is made once.
func (w Worker) Step(ctx context.Context) (bool, error) {
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, lab.Classify(err)
	}
	defer tx.Rollback()
	var job, account, amount int64
	err = tx.QueryRowContext(ctx, `
		SELECT j.id, i.account_id, i.amount
		FROM jobs j JOIN inbox i USING (source, event_id)
		ORDER BY j.id
		LIMIT 1
		FOR UPDATE OF j SKIP LOCKED`).Scan(&job, &account, &amount)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, lab.Classify(err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, amount, account)
	if err != nil {
		return false, lab.Classify(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, account)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE id = $1`, job); err != nil {
		return false, lab.Classify(err)
	}
	return true, lab.Classify(tx.Commit())
}

// Run claims jobs until ctx ends or, once stop is closed, until no job is
// left: none to claim and none held by another worker (a job held by a
// worker that died is claimable as soon as the server has rolled it back).
// A busy error (a lock timeout) is passed over: the job stays and is
// claimed again.
func (w Worker) Run(ctx context.Context, stop <-chan struct{}) error {
	idle := w.Idle
	if idle <= 0 {
		idle = 5 * time.Millisecond
	}
	for {
		found, err := w.Step(ctx)
		if err != nil && !errors.Is(err, lab.ErrBusy) {
			return err
		}
		if found {
			continue
		}
		select {
		case <-stop:
			var left int
			if err := w.DB.QueryRowContext(ctx, `SELECT count(*) FROM jobs`).Scan(&left); err != nil {
				return err
			}
			if left == 0 {
				return nil
			}
		default:
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(idle):
		}
	}
}
