package correct_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/naive/contenthash"
	"idemlab/naive/idonly"
	"idemlab/naive/insertorreplace"
)

// fuzzSeeds are the inputs every run of FuzzProcess tries first: the
// InvalidInput scenario's kinds of bad event, the edges, and some hostile
// text.
var fuzzSeeds = []lab.Event{
	{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500},
	{Source: "provider-a", EventID: "evt-1", AccountID: 2, Amount: 500},
	{Source: "", EventID: "evt-1", AccountID: 1, Amount: 500},
	{Source: "provider-a", EventID: "evt\x00-1", AccountID: 1, Amount: 500},
	{Source: "provider-\xff", EventID: "evt-1", AccountID: 1, Amount: 500},
	{Source: "provider-a", EventID: "evt-2", AccountID: 99, Amount: 500},
	{Source: "provider-a", EventID: "evt-3", AccountID: 1, Amount: 0},
	{Source: "provider-a", EventID: "evt-4", AccountID: 1, Amount: -1},
	{Source: "provider-a", EventID: "evt-5", AccountID: 1, Amount: lab.MaxAmount},
	{Source: "provider-a", EventID: "evt-6", AccountID: 1, Amount: lab.MaxAmount + 1},
	{Source: "provider-a", EventID: "evt-7", AccountID: 1, Amount: 1<<63 - 1},
	{Source: "provider-a", EventID: "evt-8", AccountID: -1 << 63, Amount: 5},
	{Source: "provider-b", EventID: "'; DROP TABLE inbox; --", AccountID: 2, Amount: 7},
	{Source: "provider-a", EventID: "evt-9", AccountID: 1, Amount: 500}, // the first one's content, another event
}

// ledgerModel is what the handler should have stored.
type ledgerModel struct {
	stored   map[lab.Key]lab.Event
	balances map[int64]int64
}

// deliverTwice delivers e twice to h over db and holds the answers and the
// ledger to the model: never "other error", a first delivery applied once
// and credited once, its repeat a duplicate, another payload under a known
// key a conflict, a refused event nothing written. It returns what broke.
func deliverTwice(h lab.Processor, db *sql.DB, m *ledgerModel, e lab.Event) error {
	for delivery := 1; delivery <= 2; delivery++ {
		o, err := h.Process(context.Background(), e)
		prev, seen := m.stored[e.Key()]
		switch {
		case err != nil && lab.ErrorKind(err) == "other error":
			return fmt.Errorf("Process(%q) = %v, want an outcome or an error of a kind", e, err)
		case err == nil && o == lab.Applied:
			if seen {
				return fmt.Errorf("Process(%q) delivery %d = applied, want duplicate: %v was applied before", e, delivery, prev)
			}
			m.stored[e.Key()] = e
			m.balances[e.AccountID] += e.Amount
		case err == nil && o == lab.Duplicate:
			if !seen || prev != e {
				return fmt.Errorf("Process(%q) delivery %d = duplicate, but the model holds %v (known %v)", e, delivery, prev, seen)
			}
		case errors.Is(err, lab.ErrPayloadConflict):
			if !seen || prev == e {
				return fmt.Errorf("Process(%q) = %v, but the model holds %v (known %v)", e, err, prev, seen)
			}
		case errors.Is(err, lab.ErrInvalidEvent), errors.Is(err, lab.ErrUnknownAccount):
		default:
			return fmt.Errorf("Process(%q) = %v, %v: an answer the model cannot place", e, o, err)
		}
	}
	var rows int
	if err := db.QueryRow(`SELECT count(*) FROM inbox`).Scan(&rows); err != nil {
		return err
	}
	if rows != len(m.stored) {
		return fmt.Errorf("after Process(%q): %d inbox rows, want %d", e, rows, len(m.stored))
	}
	for id, want := range m.balances {
		var got int64
		if err := db.QueryRow(`SELECT balance FROM accounts WHERE id = ?`, id).Scan(&got); err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("after Process(%q): balance of account %d = %d, want %d", e, id, got, want)
		}
	}
	return nil
}

// FuzzProcess feeds the handler arbitrary events, each delivered twice, on
// one database with accounts 1 and 2, and holds it to deliverTwice. go test
// runs the seeds; go test -run '^$' -fuzz=FuzzProcess ./correct searches
// further (what it finds is kept in testdata/fuzz and replayed by go test).
func FuzzProcess(f *testing.F) {
	for _, e := range fuzzSeeds {
		f.Add(e.Source, e.EventID, e.AccountID, e.Amount)
	}
	db := open(f, correct.DSN)
	if _, err := db.Exec(`INSERT INTO accounts (id) VALUES (2)`); err != nil {
		f.Fatal(err)
	}
	h := correct.New(db)
	m := &ledgerModel{stored: map[lab.Key]lab.Event{}, balances: map[int64]int64{1: 0, 2: 0}}
	f.Fuzz(func(t *testing.T, source, id string, account, amount int64) {
		if err := deliverTwice(h, db, m, lab.Event{Source: source, EventID: id, AccountID: account, Amount: amount}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFuzzCheckCatches holds deliverTwice to mistakes it must reject: the
// seeds alone catch each of these naive handlers.
func TestFuzzCheckCatches(t *testing.T) {
	for _, v := range []lab.Variant{idonly.Variant, insertorreplace.Variant, contenthash.Variant} {
		db := open(t, v.DSN)
		if _, err := db.Exec(`INSERT INTO accounts (id) VALUES (2)`); err != nil {
			t.Fatal(err)
		}
		h := v.New(db)
		m := &ledgerModel{stored: map[lab.Key]lab.Event{}, balances: map[int64]int64{1: 0, 2: 0}}
		caught := false
		for _, e := range fuzzSeeds {
			if deliverTwice(h, db, m, e) != nil {
				caught = true
				break
			}
		}
		if !caught {
			t.Errorf("deliverTwice over the seeds accepts %s (%s), want it caught", v.Name, v.Mistake)
		}
	}
}
