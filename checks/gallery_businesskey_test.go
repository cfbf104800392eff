package checks_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"idemlab/checks"
	"idemlab/exercises/businesskey"
	"idemlab/lab"
	solution "idemlab/solutions/businesskey"
)

// Exercise 7: one order, two event ids.
type orderFix int

const (
	inboxByOrder       orderFix = iota // the inbox keyed by the order instead of the event
	orderCheckOutside                  // "already activated?" read outside the transaction
	twoTransactions                    // the event recorded and committed, then the order claimed
	claimWithoutRecord                 // the order claimed first; a repeat of the order is not recorded
	// amountKey: the student takes the payment for the business operation
	// and keys activations by (order_id, amount): a provider that reports
	// one payment twice repeats both. So it does in every story of the
	// check's own guarantees, where both events of order-42 say 500. A
	// second event for the order with another amount (a partial capture, a
	// rounding) activates it again.
	amountKey
	// caseFoldedKey: the student declares the activations' key COLLATE
	// NOCASE, as the team's schemas declare identifiers. Order ids are
	// opaque and case-sensitive: order-A and order-a are two orders, and
	// the second one's payment is answered duplicate, never activated.
	caseFoldedKey
)

var businesskeyFixes = []struct {
	name string
	fix  orderFix
	by   []string
}{
	{"inbox-keyed-by-order", inboxByOrder, []string{"OneActivation"}},
	{"order-check-outside-the-transaction", orderCheckOutside, []string{"OrderRace"}},
	{"two-transactions", twoTransactions, []string{"OrderFaults"}},
	{"claim-without-recording", claimWithoutRecord, []string{"OneActivation"}},
	{"activation-keyed-by-amount", amountKey, []string{"OrderSearch"}},
	{"activation-key-without-case", caseFoldedKey, []string{"OrderSearch"}},
}

func TestGalleryBusinessKey(t *testing.T) {
	for _, w := range businesskeyFixes {
		t.Run("businesskey/"+w.name, func(t *testing.T) {
			t.Parallel()
			schema := solution.Schema
			switch w.fix {
			case inboxByOrder:
				schema = strings.Replace(schema, "PRIMARY KEY (source, event_id)", "PRIMARY KEY (order_id)", 1)
			case amountKey:
				schema = strings.Replace(schema, "order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)",
					"order_id TEXT NOT NULL REFERENCES orders (id),\n\tamount   INTEGER NOT NULL,\n\tPRIMARY KEY (order_id, amount)", 1)
			case caseFoldedKey:
				schema = strings.Replace(schema, "order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)",
					"order_id TEXT NOT NULL PRIMARY KEY COLLATE NOCASE REFERENCES orders (id)", 1)
			}
			s := businesskey.Service{Name: "gallery/businesskey/" + w.name, Schema: schema, DSN: solution.DSN,
				New: func(db *sql.DB) businesskey.Processor { return &orders{db, w.fix} }}
			reject(t, checks.BusinessKey, s, w.by)
		})
	}
}

type orders struct {
	db  *sql.DB
	fix orderFix
}

func (h *orders) Process(ctx context.Context, p businesskey.Payment) (lab.Outcome, error) {
	record := func(tx *sql.Tx) (bool, error) {
		target := "source, event_id"
		if h.fix == inboxByOrder {
			target = "order_id"
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO inbox (source, event_id, order_id, amount) VALUES ($1, $2, $3, $4)
			ON CONFLICT (`+target+`) DO NOTHING`, p.Source, p.EventID, p.OrderID, p.Amount)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n == 1, err
	}
	claim := func(tx *sql.Tx) (bool, error) {
		claim, args := `INSERT INTO activations (order_id) VALUES ($1) ON CONFLICT (order_id) DO NOTHING`, []any{p.OrderID}
		if h.fix == amountKey {
			claim, args = `INSERT INTO activations (order_id, amount) VALUES ($1, $2) ON CONFLICT DO NOTHING`, []any{p.OrderID, p.Amount}
		}
		res, err := tx.ExecContext(ctx, claim, args...)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n == 1, err
	}
	activate := func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE orders SET activations = activations + 1 WHERE id = $1`, p.OrderID)
		return err
	}
	inTx := func(body func(tx *sql.Tx) (lab.Outcome, error)) (lab.Outcome, error) {
		tx, err := h.db.BeginTx(ctx, nil)
		if err != nil {
			return 0, lab.Classify(err)
		}
		defer tx.Rollback()
		o, err := body(tx)
		if err != nil {
			return 0, lab.Classify(err)
		}
		if err := tx.Commit(); err != nil {
			return 0, lab.Classify(err)
		}
		return o, nil
	}

	switch h.fix {
	case inboxByOrder:
		return inTx(func(tx *sql.Tx) (lab.Outcome, error) {
			if ok, err := record(tx); err != nil || !ok {
				return lab.Duplicate, err
			}
			return lab.Applied, activate(tx)
		})
	case orderCheckOutside:
		var n int
		if err := h.db.QueryRowContext(ctx, `SELECT activations FROM orders WHERE id = $1`, p.OrderID).Scan(&n); err != nil {
			return 0, lab.Classify(err)
		}
		return inTx(func(tx *sql.Tx) (lab.Outcome, error) {
			if ok, err := record(tx); err != nil || !ok || n > 0 {
				return lab.Duplicate, err
			}
			return lab.Applied, activate(tx)
		})
	case twoTransactions:
		o, err := inTx(func(tx *sql.Tx) (lab.Outcome, error) {
			if ok, err := record(tx); err != nil || !ok {
				return lab.Duplicate, err
			}
			return lab.Applied, nil
		})
		if err != nil || o == lab.Duplicate {
			return o, err
		}
		return inTx(func(tx *sql.Tx) (lab.Outcome, error) {
			if ok, err := claim(tx); err != nil || !ok {
				return lab.Duplicate, err
			}
			return lab.Applied, activate(tx)
		})
	case amountKey, caseFoldedKey: // the solution's order, with its own key
		return inTx(func(tx *sql.Tx) (lab.Outcome, error) {
			if ok, err := record(tx); err != nil || !ok {
				return lab.Duplicate, err
			}
			if ok, err := claim(tx); err != nil || !ok {
				return lab.Duplicate, err
			}
			return lab.Applied, activate(tx)
		})
	default: // claimWithoutRecord
		return inTx(func(tx *sql.Tx) (lab.Outcome, error) {
			if ok, err := claim(tx); err != nil || !ok {
				return lab.Duplicate, err
			}
			if _, err := record(tx); err != nil {
				return 0, err
			}
			return lab.Applied, activate(tx)
		})
	}
}
