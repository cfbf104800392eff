package fleet

// The live demonstration behind cmd/receiver and cmd/provider: a variant
// served on a real TCP socket behind webhook.Receiver, and providers that
// send it signed deliveries. The commands are thin; this file is what the
// demo's tests drive over loopback. It links SQLite, so cmd/lab's command
// never imports it (only a test of cmd/lab does).

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"idemlab/lab"
	"idemlab/lab/report"
	"idemlab/variants"
	"idemlab/webhook"

	"modernc.org/sqlite"
)

// Secrets are the demo's integrations and their signing secrets. They are
// published in docs/http.md on purpose: a workshop's students sign requests
// by hand with them. Never reuse them.
var Secrets = map[string]string{
	"provider-a": "whsec_ZGVtbyBzZWNyZXQgZm9yIHByb3ZpZGVyLWEsIDMyIGI=",
	"provider-b": "whsec_ZGVtbyBzZWNyZXQgZm9yIHByb3ZpZGVyLWIsIDMyIGI=",
}

// Accounts are seeded into a new database with balance 0.
var Accounts = []int64{1, 2, 3}

// Variant finds a variant by its registry name ("correct",
// "naive/checkthenact") or the last part of it ("checkthenact").
func Variant(name string) (lab.Variant, error) {
	var names []string
	for _, v := range variants.All {
		if v.Name == name || v.Name[strings.LastIndex(v.Name, "/")+1:] == name {
			return v, nil
		}
		names = append(names, v.Name)
	}
	return lab.Variant{}, fmt.Errorf("no variant %q; there are %s", name, strings.Join(names, ", "))
}

// Server is a variant's database served over HTTP.
type Server struct {
	Variant lab.Variant
	db      *sql.DB
	handler http.Handler
}

// Open opens (and on first use creates) the database at path for v.
func Open(v lab.Variant, path string) (*Server, error) {
	_, statErr := os.Stat(path)
	conn, err := sqlite.NewConnector(v.DSN(path))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	// One connection, as package correct recommends for SQLite's one
	// writer: a burst of deliveries queues in database/sql instead of
	// polling SQLite's lock, where the unlucky ones outwait busy_timeout
	// and answer 503 busy. A variant that needs a second connection while
	// its transaction holds this one (naive/poolread) waits until the
	// receiver's deadline, and shows its mistake.
	db.SetMaxOpenConns(1)
	if errors.Is(statErr, os.ErrNotExist) {
		if _, err := db.Exec(v.Schema); err != nil {
			db.Close()
			return nil, fmt.Errorf("creating %s: %w", path, err)
		}
		for _, id := range Accounts {
			if _, err := db.Exec(`INSERT INTO accounts (id, balance) VALUES (?, 0)`, id); err != nil {
				db.Close()
				return nil, err
			}
		}
	}
	s := &Server{Variant: v, db: db}
	proc := v.New(db)
	routes := map[string]http.Handler{"/state": http.HandlerFunc(s.state)}
	for source, secret := range Secrets {
		key, err := webhook.ParseSecret(secret)
		if err != nil {
			db.Close()
			return nil, err
		}
		routes["/webhooks/"+source] = webhook.NewReceiver(proc, &webhook.Verifier{
			Integrations: []webhook.Integration{{Source: source, Secrets: []webhook.Secret{key}}}})
	}
	s.handler = logged(webhook.ExactPaths(routes))
	return s, nil
}

// Close closes the database.
func (s *Server) Close() error { return s.db.Close() }

// Serve answers on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// State is what GET /state shows: every balance and inbox row, and, in
// words first, whether each balance is the sum of its inbox rows — what
// exactly once leaves behind, since every account starts at 0.
type State struct {
	Says     []string        `json:"says"`
	Balances map[int64]int64 `json:"balances"`
	Inbox    []Row           `json:"inbox"`
}

// judge writes st.Says: a sentence per account.
func (st *State) judge() {
	sum, rows := map[int64]int64{}, map[int64]int{}
	for _, r := range st.Inbox {
		sum[r.AccountID] += r.Amount
		rows[r.AccountID]++
	}
	st.Says = []string{}
	for _, id := range slices.Sorted(maps.Keys(st.Balances)) {
		b, s := st.Balances[id], sum[id]
		of := "the sum of its " + report.Count(rows[id], "inbox row", "inbox rows")
		switch {
		case b == s:
			st.Says = append(st.Says, fmt.Sprintf("account %d: balance %d equals %s: every credit has its event, once", id, b, of))
		case b > s:
			st.Says = append(st.Says, fmt.Sprintf("account %d: balance %d does NOT equal %s (%d): %d was credited with no event behind it: an event applied more than once", id, b, of, s, b-s))
		default:
			st.Says = append(st.Says, fmt.Sprintf("account %d: balance %d does NOT equal %s (%d): %d of recorded events was never credited", id, b, of, s, s-b))
		}
	}
}

// ReadState asks the receiver at base ("http://127.0.0.1:8080") for its
// state.
func ReadState(ctx context.Context, base string) (State, error) {
	var st State
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(base, "/")+"/state", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET %s: %s", req.URL, resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// FreshID returns id if source has not delivered it yet (it has no inbox
// row in st), or else the first id after it that it has not: evt-1, then
// evt-2, evt-3…; an id that ends in no number gets -2, -3…. A burst of
// copies of an event already applied is all duplicates, whatever the
// handler: it can show no race, and would teach that the handler has none.
func FreshID(st State, source, id string) string {
	used := map[string]bool{}
	for _, r := range st.Inbox {
		if r.Source == source {
			used[r.EventID] = true
		}
	}
	if !used[id] {
		return id
	}
	stem, n := id+"-", 1
	if i := strings.LastIndexFunc(id, func(r rune) bool { return r < '0' || r > '9' }); i < len(id)-1 {
		stem = id[:i+1]
		n, _ = strconv.Atoi(id[i+1:])
	}
	for {
		n++
		if next := stem + strconv.Itoa(n); !used[next] {
			return next
		}
	}
}

// Row is an inbox row.
type Row struct {
	Source    string `json:"source"`
	EventID   string `json:"event_id"`
	AccountID int64  `json:"account_id"`
	Amount    int64  `json:"amount"`
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	st, err := s.read(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(st)
}

func (s *Server) read(ctx context.Context) (State, error) {
	st := State{Balances: map[int64]int64{}, Inbox: []Row{}}
	rows, err := s.db.QueryContext(ctx, `SELECT id, balance FROM accounts`)
	if err != nil {
		return st, err
	}
	for rows.Next() {
		var id, b int64
		if err := rows.Scan(&id, &b); err != nil {
			return st, err
		}
		st.Balances[id] = b
	}
	rows.Close()
	rows, err = s.db.QueryContext(ctx, `SELECT source, event_id, account_id, amount FROM inbox`)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var e Row
		if err := rows.Scan(&e.Source, &e.EventID, &e.AccountID, &e.Amount); err != nil {
			return st, err
		}
		st.Inbox = append(st.Inbox, e)
	}
	slices.SortFunc(st.Inbox, func(a, b Row) int {
		return strings.Compare(a.Source+"/"+a.EventID, b.Source+"/"+b.EventID)
	})
	st.judge()
	return st, rows.Err()
}

// logged logs every request with its answer.
func logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		start := time.Now()
		h.ServeHTTP(rec, r)
		slog.Info(r.Method+" "+r.URL.Path, "id", r.Header.Get(webhook.HeaderID), "status", rec.status,
			"replayed", rec.Header().Get(webhook.HeaderReplayed) == "true", "took", time.Since(start).Round(time.Microsecond))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap returns the server's ResponseWriter, so that
// http.ResponseController reaches it: the receiver sets the body's read
// deadline through it.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// ReceiverAddr is where cmd/receiver listens unless -addr says otherwise,
// and so where cmd/provider sends: go run ./cmd/lab web serves the page on
// another port (8090), so that a workshop can run the demo and the page at
// once.
const ReceiverAddr = "127.0.0.1:8080"

// Provider returns a sender for source to the receiver at base
// ("http://127.0.0.1:8080").
func Provider(base, source string) (*webhook.Provider, error) {
	secret, ok := Secrets[source]
	if !ok {
		return nil, fmt.Errorf("no demo integration %q", source)
	}
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		return nil, err
	}
	return webhook.NewProvider(strings.TrimSuffix(base, "/")+"/webhooks/"+source, key), nil
}

// Body is the JSON a provider sends for a credit.
func Body(account, amount int64) []byte {
	return fmt.Appendf(nil, `{"account_id":%d,"amount":%d}`, account, amount)
}

// Curl returns a curl command that delivers one signed request, signed
// now: a student can paste it, repeat it within five minutes (a replay,
// answered as a duplicate), or edit it (and see 401).
func Curl(p *webhook.Provider, id string, body []byte) string {
	h := http.Header{}
	webhook.SignRequest(h, id, time.Now(), body, p.Secrets...)
	// One option a line, so that the command fits a terminal and still
	// pastes as one.
	return fmt.Sprintf("curl -i %s \\\n  -H 'Content-Type: application/json' \\\n  -H 'webhook-id: %s' \\\n"+
		"  -H 'webhook-timestamp: %s' \\\n  -H 'webhook-signature: %s' \\\n  -d '%s'",
		p.URL, id, h.Get(webhook.HeaderTimestamp), h.Get(webhook.HeaderSignature), body)
}
