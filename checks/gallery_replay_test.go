package checks_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"idemlab/checks"
	"idemlab/exercises/replay"
	"idemlab/lab"
	solution "idemlab/solutions/replay"
)

// Exercise 3: a repeat gets the first answer.
type replayFix int

const (
	answerInSecondTx replayFix = iota // the answer stored in a transaction of its own, after the credit's
	balanceBefore                     // the balance read before the credit stored as the answer
	answerInMemory                    // the answers kept in a map of the handler, not in the database
	// The student computes the answer up front, to store it with the row
	// in the INSERT itself (no second UPDATE): the balance read on the
	// pool, before BEGIN, plus the amount. One delivery at a time, that is
	// the balance after the credit. Two events for one account at once both
	// read the balance before either credit, and the second to commit
	// stores (and answers) a balance that misses the first's credit.
	balanceReadFirst
	// The student keeps the answers out of the inbox, in a table of their
	// own, TEMP because they only matter while the provider retries:
	// created if missing, written in the credit's transaction, read by a
	// repeat (which falls back to the current balance when it finds none).
	// A TEMP table belongs to the connection that created it. One
	// connection serves every check that delivers one event at a time, and
	// even a restart on the same pool reuses it; once the pool opens
	// another (its idle ones closed, or two deliveries at once), a repeat
	// finds no answer there and reports the balance as it is now.
	answerInTempTable
	// Blind students' fixes (checks/testdata/blind/round0, accepted by the
	// checks of their day).
	//
	// answerAfterCommitBestEffort: the student adds a nullable column for
	// the answer and stores it with a second statement on the pool after
	// COMMIT, swallowing its error ("the credit is committed, don't fail
	// the delivery"); a repeat that finds no answer stored falls back to
	// the balance as it is now. A store that fails (or a crash) between
	// the COMMIT and the store, and then a credit of another event for the
	// account, and the retry gets the moved balance: evt-1 answered 500,
	// its retry after evt-2's credit 800.
	answerAfterCommitBestEffort
	// sumOfInboxCredits: the student stores nothing and has a repeat
	// compute its answer as the sum of the account's inbox amounts up to
	// and including its own row (by rowid). That is the balance right
	// after the event only if the account started at 0 and nothing but
	// the inbox's credits ever moved it: an account opened with a balance
	// gets, on a repeat, a receipt short of the first by that balance.
	sumOfInboxCredits
	// recentAnswersOnly (a blind student's of round 2,
	// round2/replay__last_1000_receipts.diff): "providers retry within
	// hours", so only the last 1,000 answers are kept, and a repeat of an
	// older event is answered with the balance as it is now. After 1,000
	// other credits, the retry of the first gets another receipt than its
	// first answer.
	recentAnswersOnly
	// answersInTheProcess (a blind student's of round 3,
	// round3/b-replay__processmap.diff): the first receipts kept in a
	// variable of the package (a sync.Map), not of the handler, so that a
	// new handler on the same database (a restart, as the lab's stories
	// make one) still finds them. A restart of the process does not: a
	// repeat after it, and after another credit, is answered with the
	// balance as it is now.
	answersInTheProcess
)

// processAnswers is answersInTheProcess's memory: the test binary's, as the
// student's map is their service's process's.
var processAnswers sync.Map

var replayFixes = []struct {
	name string
	fix  replayFix
	by   []string
}{
	{"answer-in-a-second-transaction", answerInSecondTx, []string{"AnswerSurvivesFaults"}},
	{"balance-before-the-credit", balanceBefore, []string{"FirstAnswer"}},
	{"answers-in-memory", answerInMemory, []string{"FirstAnswer"}},
	{"balance-read-first", balanceReadFirst, []string{"ReceiptSearch"}},
	{"answers-in-a-temp-table", answerInTempTable, []string{"ReceiptSearch"}},
	{"answer-stored-after-commit-best-effort", answerAfterCommitBestEffort, []string{"ReceiptSearch"}},
	{"answer-is-the-sum-of-inbox-credits", sumOfInboxCredits, []string{"ReceiptSearch"}},
	{"answers-of-the-last-1000-events", recentAnswersOnly, []string{"ReceiptAfterManyCredits"}},
	{"answers-kept-by-the-process", answersInTheProcess, []string{"ProcessRestart"}},
}

func replayService(name string, fix replayFix) replay.Service {
	schema := solution.Schema
	if fix == answerAfterCommitBestEffort || fix == recentAnswersOnly { // an answer may be missing: not stored yet, or dropped
		schema = strings.Replace(schema, "balance_after INTEGER NOT NULL", "balance_after INTEGER", 1)
	}
	return replay.Service{Name: "gallery/replay/" + name, Schema: schema, DSN: solution.DSN,
		New: func(db *sql.DB) replay.Processor { return &receipts{db: db, fix: fix, memo: map[lab.Key]int64{}} }}
}

func TestGalleryReplay(t *testing.T) {
	for _, w := range replayFixes {
		t.Run("replay/"+w.name, func(t *testing.T) {
			t.Parallel()
			reject(t, checks.Replay, replayService(w.name, w.fix), w.by)
		})
	}
}

// answersTable keeps the answers of answerInTempTable: a TEMP table lives
// in the connection that created it, and every connection has its own.
const answersTable = `CREATE TEMP TABLE IF NOT EXISTS answers (
	source TEXT NOT NULL, event_id TEXT NOT NULL, balance INTEGER NOT NULL, PRIMARY KEY (source, event_id))`

type receipts struct {
	db   *sql.DB
	fix  replayFix
	mu   sync.Mutex
	memo map[lab.Key]int64
}

func (h *receipts) Process(ctx context.Context, e lab.Event) (replay.Receipt, error) {
	fail := func(err error) (replay.Receipt, error) {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) { // the caller gave up: see correct.classify
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return replay.Receipt{}, lab.Classify(err)
	}
	if err := e.Validate(); err != nil {
		return replay.Receipt{}, err
	}
	var read, first int64 // first: the answer stored with the row, 0 until the credit tells
	if h.fix == balanceReadFirst {
		if err := h.db.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, e.AccountID).Scan(&read); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fail(err)
		}
		first = read + e.Amount
	}
	var stub any = first // what the INSERT stores as the answer
	if h.fix == answerAfterCommitBestEffort {
		stub = nil // no answer until the store after COMMIT writes one
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	if h.fix == answerInTempTable {
		if _, err := tx.ExecContext(ctx, answersTable); err != nil {
			return fail(err)
		}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount, balance_after)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount, stub)
	if err != nil {
		return fail(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return fail(err)
	}
	if inserted == 0 {
		var account, amount int64
		var answer sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT account_id, amount, balance_after FROM inbox WHERE source = $1 AND event_id = $2`,
			e.Source, e.EventID).Scan(&account, &amount, &answer); err != nil {
			return fail(err)
		}
		if account != e.AccountID || amount != e.Amount {
			return replay.Receipt{}, lab.ErrPayloadConflict
		}
		stored := answer.Int64
		if (h.fix == answerAfterCommitBestEffort || h.fix == recentAnswersOnly) && !answer.Valid { // not stored: the best it can say
			if err := tx.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, e.AccountID).Scan(&stored); err != nil {
				return fail(err)
			}
		}
		if h.fix == sumOfInboxCredits {
			if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM inbox
				WHERE account_id = $1 AND rowid <= (SELECT rowid FROM inbox WHERE source = $2 AND event_id = $3)`,
				e.AccountID, e.Source, e.EventID).Scan(&stored); err != nil {
				return fail(err)
			}
		}
		if h.fix == answerInTempTable {
			if err := tx.QueryRowContext(ctx, `SELECT balance FROM answers WHERE source = $1 AND event_id = $2`, e.Source, e.EventID).Scan(&stored); errors.Is(err, sql.ErrNoRows) {
				// not this connection's: the best it can say
				if err := tx.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, e.AccountID).Scan(&stored); err != nil {
					return fail(err)
				}
			} else if err != nil {
				return fail(err)
			}
		}
		if h.fix == answersInTheProcess {
			m, ok := processAnswers.Load(e.Key())
			stored = 0
			if ok {
				stored = m.(int64)
			} else if err := tx.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, e.AccountID).Scan(&stored); err != nil {
				return fail(err) // not this process's: the best it can say
			}
		}
		if h.fix == answerInMemory {
			h.mu.Lock()
			m, ok := h.memo[e.Key()]
			h.mu.Unlock()
			if !ok { // not this process's: the best it can say
				if err := tx.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, e.AccountID).Scan(&m); err != nil {
					return fail(err)
				}
			}
			stored = m
		}
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
		return replay.Receipt{Outcome: lab.Duplicate, Balance: stored}, nil
	}
	var before, after int64
	if err := tx.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, e.AccountID).Scan(&before); err != nil {
		return fail(err)
	}
	if err := tx.QueryRowContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2 RETURNING balance`,
		e.Amount, e.AccountID).Scan(&after); err != nil {
		return fail(err)
	}
	answer := after
	switch h.fix {
	case balanceBefore:
		answer = before
	case balanceReadFirst:
		answer = first // already stored by the INSERT
	}
	store := func(x interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}) error {
		_, err := x.ExecContext(ctx, `UPDATE inbox SET balance_after = $1 WHERE source = $2 AND event_id = $3`, answer, e.Source, e.EventID)
		return err
	}
	switch h.fix {
	case balanceReadFirst:
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
	case answerInTempTable:
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO answers (source, event_id, balance) VALUES ($1, $2, $3)`, e.Source, e.EventID, after); err != nil {
			return fail(err)
		}
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
	case answerInSecondTx:
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
		if err := store(h.db); err != nil {
			return fail(err)
		}
	case answerAfterCommitBestEffort:
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
		_ = store(h.db) // best effort: the credit is committed, so its failure does not fail the delivery
	case answerInMemory:
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
		h.mu.Lock()
		h.memo[e.Key()] = answer
		h.mu.Unlock()
	case answersInTheProcess:
		processAnswers.Store(e.Key(), answer) // before COMMIT, as the student's: a redelivery after a failed one stores again
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
	default:
		if err := store(tx); err != nil {
			return fail(err)
		}
		if h.fix == recentAnswersOnly {
			if _, err := tx.ExecContext(ctx, `UPDATE inbox SET balance_after = NULL WHERE rowid <= (SELECT max(rowid) FROM inbox) - 1000`); err != nil {
				return fail(err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
	}
	return replay.Receipt{Outcome: lab.Applied, Balance: answer}, nil
}
