package checks_test

import (
	"context"
	"database/sql"
	"hash/crc32"
	"hash/fnv"
	"strings"
	"sync"
	"testing"
	"time"

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
	// trimmedKey: a blind student's fix (trim_orderkey), accepted by the
	// check of its day, which never drew order ids that differ only by
	// white space: the claim's key is strings.TrimSpace of the order id,
	// "to clean up sloppy ids". Order ids are opaque: order-42 and
	// "order-42 " are two orders, and paying the second after the first
	// finds the claim taken: answered duplicate, never activated.
	trimmedKey
	// rtrimKey: the activations' key declared COLLATE RTRIM, which SQLite
	// offers to ignore trailing spaces: the same two orders taken for one.
	rtrimKey
	// memoryMap: a blind student's fix (memory_map), which hung the check
	// of its day: which orders are activated is kept in the handler's
	// memory, loaded from orders by New and set after COMMIT, under a
	// mutex held for the whole of Process, so that no two deliveries of
	// one process pass the check together. But a COMMIT that reports an
	// error after it reached the disk leaves the map stale: evt-1's retry
	// answers duplicate, and evt-2, a new event, activates the order again
	// (as would a second replica of the service, whose map is its own).
	memoryMap
	// prefixKey: a blind student's fix (claim_key_prefix16), accepted by
	// the check of its day, whose orders differed within their first bytes:
	// the claim's key is the order id cut to 16 bytes ("our ids are order-
	// and a number"). order-1234567890 and order-12345678901 are two
	// orders; paying the second after the first finds the claim taken:
	// answered duplicate, never activated.
	prefixKey
	// fnvKey: a blind student's fix (claim_key_fnv32), accepted by the
	// check of its day: the claim's key is the order id's FNV-1a 32-bit
	// hash, an INTEGER PRIMARY KEY ("compact, and the rowid itself").
	// order-229599 and order-432382 hash alike (4001749250): the second
	// order is never activated. Among 100000 orders a collision is more
	// likely than not.
	fnvKey
	// crcKey: the same with CRC-32 (IEEE), the other 32-bit hash Go's
	// library offers: order-0URYL1LJ and order-XWSZ5ZH7 (3829696261).
	crcKey
	// intAffinityKey: a blind student's fix of round 3
	// (round3/a-businesskey__intaffinity.diff): the claim in a table of its
	// own, keyed by the order, in the same transaction, as the hints say;
	// but the table is not STRICT and its key is declared INT, which gives
	// it INTEGER affinity: a text that reads as a number is stored as that
	// number. Orders 42 and 042 (or 100 and 1e2) are two orders whose
	// claims are one: the second is answered duplicate, never activated.
	intAffinityKey
	// claimWindow: a blind student's fix of round 3
	// (round3/a-businesskey__ttlclaim.diff): a claim holds for 24 hours of
	// time.Now, "a provider's retries end within a day; later is a
	// renewal", and an older one is taken again. A payment reported again
	// under a new event id 25 hours later (a provider's retry schedule, a
	// resend from its dashboard) activates the order a second time.
	claimWindow
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
	{"activation-key-trimmed", trimmedKey, []string{"OrderSearch"}},
	{"activation-key-rtrim-collation", rtrimKey, []string{"OrderSearch"}},
	{"activated-orders-in-memory-behind-a-mutex", memoryMap, []string{"OrderFaults"}},
	{"activation-key-cut-to-16-bytes", prefixKey, []string{"OrderSearch"}},
	{"activation-key-fnv-1a-32", fnvKey, []string{"OrderSearch"}},
	{"activation-key-crc-32", crcKey, []string{"OrderSearch"}},
	{"activation-key-with-integer-affinity", intAffinityKey, []string{"OrderSearch"}},
	{"activation-claim-held-for-a-day", claimWindow, []string{"LaterPayments"}},
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
			case trimmedKey: // the student's table: no order of that id need exist
				schema = strings.Replace(schema, "order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)",
					"order_id TEXT NOT NULL PRIMARY KEY", 1)
			case prefixKey: // the student's table: a cut key is no order's id
				schema = strings.Replace(schema, "order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)",
					"order_id TEXT NOT NULL PRIMARY KEY", 1)
			case fnvKey, crcKey: // the hash as the rowid
				schema = strings.Replace(schema, "order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)",
					"order_id INTEGER PRIMARY KEY", 1)
			case intAffinityKey:
				schema = strings.Replace(schema, "CREATE TABLE activations (\n\torder_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)\n) STRICT;",
					"CREATE TABLE activations (\n\torder_id INT PRIMARY KEY\n);", 1)
			case claimWindow:
				schema = strings.Replace(schema, "order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)",
					"order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id),\n\tclaimed_at INTEGER NOT NULL", 1)
			case rtrimKey:
				schema = strings.Replace(schema, "order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)",
					"order_id TEXT NOT NULL PRIMARY KEY COLLATE RTRIM REFERENCES orders (id)", 1)
			}
			s := businesskey.Service{Name: "gallery/businesskey/" + w.name, Schema: schema, DSN: solution.DSN,
				New: func(db *sql.DB) businesskey.Processor { return newOrders(db, w.fix) }}
			reject(t, checks.BusinessKey, s, w.by)
		})
	}
}

type orders struct {
	db  *sql.DB
	fix orderFix

	mu        sync.Mutex      // memoryMap: held for the whole of Process
	activated map[string]bool // memoryMap: the orders activated, as far as this handler knows
}

func newOrders(db *sql.DB, fix orderFix) *orders {
	h := &orders{db: db, fix: fix, activated: map[string]bool{}}
	if fix == memoryMap {
		rows, err := db.Query(`SELECT id FROM orders WHERE activations > 0`)
		if err == nil {
			defer rows.Close()
			for rows.Next() {
				var id string
				if rows.Scan(&id) == nil {
					h.activated[id] = true
				}
			}
		}
	}
	return h
}

func (h *orders) Process(ctx context.Context, p businesskey.Payment) (lab.Outcome, error) {
	if h.fix == memoryMap {
		h.mu.Lock()
		defer h.mu.Unlock()
	}
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
		switch h.fix {
		case amountKey:
			claim, args = `INSERT INTO activations (order_id, amount) VALUES ($1, $2) ON CONFLICT DO NOTHING`, []any{p.OrderID, p.Amount}
		case trimmedKey:
			args = []any{strings.TrimSpace(p.OrderID)}
		case prefixKey:
			args = []any{p.OrderID[:min(len(p.OrderID), 16)]}
		case fnvKey:
			h := fnv.New32a()
			h.Write([]byte(p.OrderID))
			args = []any{int64(h.Sum32())}
		case crcKey:
			args = []any{int64(crc32.ChecksumIEEE([]byte(p.OrderID)))}
		case claimWindow:
			claim = `INSERT INTO activations (order_id, claimed_at) VALUES ($1, $2)
				ON CONFLICT (order_id) DO UPDATE SET claimed_at = excluded.claimed_at
				WHERE activations.claimed_at <= excluded.claimed_at - $3`
			args = []any{p.OrderID, time.Now().Unix(), int64(24 * time.Hour / time.Second)}
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
	case memoryMap:
		o, err := inTx(func(tx *sql.Tx) (lab.Outcome, error) {
			if ok, err := record(tx); err != nil || !ok || h.activated[p.OrderID] {
				return lab.Duplicate, err
			}
			return lab.Applied, activate(tx)
		})
		if err == nil && o == lab.Applied {
			h.activated[p.OrderID] = true
		}
		return o, err
	case amountKey, caseFoldedKey, trimmedKey, rtrimKey, prefixKey, fnvKey, crcKey, intAffinityKey, claimWindow:
		// the solution's order, with its own key
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
