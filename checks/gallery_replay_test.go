package checks_test

import (
	"context"
	"database/sql"
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
)

var replayFixes = []struct {
	name string
	fix  replayFix
	by   []string
}{
	{"answer-in-a-second-transaction", answerInSecondTx, []string{"AnswerSurvivesFaults"}},
	{"balance-before-the-credit", balanceBefore, []string{"FirstAnswer"}},
	{"answers-in-memory", answerInMemory, []string{"FirstAnswer"}},
}

func replayService(name string, fix replayFix) replay.Service {
	return replay.Service{Name: "gallery/replay/" + name, Schema: solution.Schema, DSN: solution.DSN,
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

type receipts struct {
	db   *sql.DB
	fix  replayFix
	mu   sync.Mutex
	memo map[lab.Key]int64
}

func (h *receipts) Process(ctx context.Context, e lab.Event) (replay.Receipt, error) {
	fail := func(err error) (replay.Receipt, error) { return replay.Receipt{}, lab.Classify(err) }
	if err := e.Validate(); err != nil {
		return replay.Receipt{}, err
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO inbox (source, event_id, account_id, amount, balance_after)
		VALUES ($1, $2, $3, $4, 0) ON CONFLICT (source, event_id) DO NOTHING`, e.Source, e.EventID, e.AccountID, e.Amount)
	if err != nil {
		return fail(err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return fail(err)
	}
	if inserted == 0 {
		var account, amount, stored int64
		if err := tx.QueryRowContext(ctx, `SELECT account_id, amount, balance_after FROM inbox WHERE source = $1 AND event_id = $2`,
			e.Source, e.EventID).Scan(&account, &amount, &stored); err != nil {
			return fail(err)
		}
		if account != e.AccountID || amount != e.Amount {
			return replay.Receipt{}, lab.ErrPayloadConflict
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
		return replay.Receipt{Outcome: lab.Duplicate, Balance: stored}, tx.Commit()
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
	if h.fix == balanceBefore {
		answer = before
	}
	store := func(x interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}) error {
		_, err := x.ExecContext(ctx, `UPDATE inbox SET balance_after = $1 WHERE source = $2 AND event_id = $3`, answer, e.Source, e.EventID)
		return err
	}
	switch h.fix {
	case answerInSecondTx:
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
		if err := store(h.db); err != nil {
			return fail(err)
		}
	case answerInMemory:
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
		h.mu.Lock()
		h.memo[e.Key()] = answer
		h.mu.Unlock()
	default:
		if err := store(tx); err != nil {
			return fail(err)
		}
		if err := tx.Commit(); err != nil {
			return fail(err)
		}
	}
	return replay.Receipt{Outcome: lab.Applied, Balance: after}, nil
}
