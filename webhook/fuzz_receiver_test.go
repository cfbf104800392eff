package webhook_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/webhook"
)

// receiverSeed is one signed delivery: its webhook-id and its body.
type receiverSeed struct {
	id   string
	body string
}

// receiverSeeds are the deliveries every run of FuzzReceiver tries first,
// in order on one database: an event, its repeat, a conflict, an unknown
// account, no key; testdata/fuzz/FuzzReceiver holds more.
var receiverSeeds = []receiverSeed{
	{"evt-1", okBody},
	{"evt-1", okBody},
	{"evt-1", `{"account_id":1,"amount":5}`},
	{"evt-2", `{"account_id":99,"amount":500}`},
	{"", okBody},
	{"evt-3", `{"event_id":"evt-3","source":"provider-a","account_id":2,"amount":700}`},
}

// ledger is what a delivery can change: the inbox's rows and the balances.
type ledger struct {
	rows     int
	balances map[int64]int64
}

func readLedger(db *sql.DB) (ledger, error) {
	l := ledger{balances: map[int64]int64{}}
	if err := db.QueryRow(`SELECT count(*) FROM inbox`).Scan(&l.rows); err != nil {
		return l, err
	}
	rows, err := db.Query(`SELECT id, balance FROM accounts`)
	if err != nil {
		return l, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, balance int64
		if err := rows.Scan(&id, &balance); err != nil {
			return l, err
		}
		l.balances[id] = balance
	}
	return l, rows.Err()
}

func (l ledger) String() string { return fmt.Sprintf("%d inbox rows, balances %v", l.rows, l.balances) }

// credited returns l with one more inbox row and amount added to account.
func (l ledger) credited(account, amount int64) ledger {
	c := ledger{rows: l.rows + 1, balances: map[int64]int64{}}
	for id, b := range l.balances {
		c.balances[id] = b
	}
	c.balances[account] += amount
	return c
}

func (l ledger) equal(m ledger) bool {
	if l.rows != m.rows || len(l.balances) != len(m.balances) {
		return false
	}
	for id, b := range l.balances {
		if mb, ok := m.balances[id]; !ok || mb != b {
			return false
		}
	}
	return true
}

// receiverCheck runs signed deliveries through a Receiver over one SQLite
// database and remembers which event ids it answered as applied.
type receiverCheck struct {
	db      *sql.DB
	rc      *webhook.Receiver
	applied map[string]webhook.Body // by webhook-id, as the model stored it
}

// newReceiverCheck opens a fresh database for v with accounts 1 and 2 and
// a receiver for provider-a over v's handler (or over wrap of it).
func newReceiverCheck(t testing.TB, v lab.Variant, wrap func(lab.Processor) lab.Processor) *receiverCheck {
	t.Helper()
	conn, err := sqlite.NewConnector(v.DSN(filepath.Join(t.TempDir(), "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(v.Schema + `; INSERT INTO accounts (id, balance) VALUES (1, 0), (2, 0);`); err != nil {
		t.Fatal(err)
	}
	p := v.New(db)
	if wrap != nil {
		p = wrap(p)
	}
	rc := webhook.NewReceiver(p, endpointA())
	rc.Log = slog.New(slog.DiscardHandler)
	return &receiverCheck{db: db, rc: rc, applied: map[string]webhook.Body{}}
}

// deliver POSTs body under id, signed by provider-a now, and holds the
// answer and the database to the model: never a 5xx or a 3xx; a 4xx writes
// nothing; a 200 credits the body's account with its amount once, for an id
// never applied before; a replayed 200 writes nothing and answers an id
// applied with this very account and amount. It returns what broke.
func (c *receiverCheck) deliver(id string, body []byte) error {
	before, err := readLedger(c.db)
	if err != nil {
		return err
	}
	req := httptest.NewRequest(http.MethodPost, "/webhooks/provider-a", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	webhook.SignRequest(req.Header, id, time.Now(), body, secretA)
	w := httptest.NewRecorder()
	c.rc.ServeHTTP(w, req)
	after, err := readLedger(c.db)
	if err != nil {
		return err
	}
	status, replayed := w.Code, w.Header().Get(webhook.HeaderReplayed) == "true"
	what := fmt.Sprintf("POST id %q body %q = %d %s", id, body, status, bytes.TrimSpace(w.Body.Bytes()))
	switch {
	case status/100 == 4:
		if !after.equal(before) {
			return fmt.Errorf("%s: %v before, %v after, want nothing written", what, before, after)
		}
	case status == http.StatusOK && replayed:
		b, _ := webhook.DecodeBody(body)
		prev, ok := c.applied[id]
		if !ok || prev.AccountID != b.AccountID || prev.Amount != b.Amount {
			return fmt.Errorf("%s, replayed: applied before as %+v (known %v), want a 422 for other data", what, prev, ok)
		}
		if !after.equal(before) {
			return fmt.Errorf("%s, replayed: %v before, %v after, want nothing written", what, before, after)
		}
	case status == http.StatusOK:
		b, err := webhook.DecodeBody(body)
		if err != nil {
			return fmt.Errorf("%s: DecodeBody refuses it (%v), want 400", what, err)
		}
		if prev, ok := c.applied[id]; ok {
			return fmt.Errorf("%s: applied again, was applied as %+v, want a duplicate or a conflict", what, prev)
		}
		if want := before.credited(b.AccountID, b.Amount); !after.equal(want) {
			return fmt.Errorf("%s: %v before, %v after, want %v", what, before, after, want)
		}
		c.applied[id] = b
	default:
		return fmt.Errorf("%s, want a 200 or a 4xx", what)
	}
	return nil
}

// FuzzReceiver POSTs arbitrary bodies under arbitrary ids, validly signed,
// to a Receiver over correct on one SQLite database, and holds every answer
// to receiverCheck.deliver. go test ./webhook -run '^$' -fuzz
// '^FuzzReceiver$' searches further; its findings land in
// testdata/fuzz/FuzzReceiver and go test replays them.
func FuzzReceiver(f *testing.F) {
	for _, s := range receiverSeeds {
		f.Add(s.id, []byte(s.body))
	}
	c := newReceiverCheck(f, correct.Variant, nil)
	f.Fuzz(func(t *testing.T, id string, body []byte) {
		if err := c.deliver(id, body); err != nil {
			t.Fatal(err)
		}
	})
}
