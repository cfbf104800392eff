package fleet

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/lab"
	"idemlab/webhook"
)

// TestLoopback serves the correct variant on a real loopback socket and
// sends it what a workshop would: 8 copies of one event at once from
// provider-a, provider-b's event with the same id, a conflict, and a single
// attempt as a pasted curl command makes. Bounded: 12 requests, 20 s at most (they take a few
// tens of milliseconds).
func TestLoopback(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	v, err := Variant("correct")
	if err != nil {
		t.Fatal(err)
	}
	s := openDemo(t, v)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	a, _ := Provider(base, "provider-a")
	b, _ := Provider(base, "provider-b")
	for _, p := range []*webhook.Provider{a, b} {
		p.Schedule = []time.Duration{0, 100 * time.Millisecond} // two attempts, quickly
	}
	var wg sync.WaitGroup
	results := make([]webhook.Delivery, 8)
	for i := range results {
		wg.Go(func() { results[i] = a.Send(ctx, "evt-1", Body(1, 500)) })
	}
	wg.Wait()
	applied := 0
	for i, d := range results {
		if !d.Delivered {
			t.Errorf("copy %d of provider-a/evt-1: %v, want delivered", i, d.Attempts)
		}
		if !d.Last().Replayed {
			applied++
		}
	}
	if applied != 1 {
		t.Errorf("8 copies of provider-a/evt-1: %d answered applied, want 1", applied)
	}
	if d := b.Send(ctx, "evt-1", Body(2, 700)); !d.Delivered || d.Last().Replayed {
		t.Errorf("provider-b/evt-1: %v, want applied", d.Attempts)
	}
	if d := a.Send(ctx, "evt-1", Body(1, 700)); d.Delivered || d.Last().Status != 422 {
		t.Errorf("provider-a/evt-1 with 700: %v, want 422", d.Attempts)
	}

	// One attempt, no retry: what a pasted curl command does.
	d := (&webhook.Provider{URL: a.URL, Secrets: a.Secrets, Schedule: []time.Duration{0}}).Send(ctx, "evt-9", Body(3, 100))
	if !d.Delivered {
		t.Errorf("provider-a/evt-9: %v, want delivered", d.Attempts)
	}

	resp, err := http.Get(base + "/state")
	if err != nil {
		t.Fatal(err)
	}
	var st State
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.Balances[1] != 500 || st.Balances[2] != 700 || st.Balances[3] != 100 || len(st.Inbox) != 3 {
		t.Errorf("GET /state = %+v, want balances 500, 700, 100 and 3 inbox rows", st)
	}
	if len(st.Says) != 3 || st.Says[0] != "account 1: balance 500 equals the sum of its 1 inbox row: every credit has its event, once" {
		t.Errorf("GET /state says %q, want each balance said equal to the sum of its inbox rows", st.Says)
	}
	// Another burst of provider-a's evt-1 would be all duplicates: the
	// provider sends it as an event the receiver has not seen.
	read, err := ReadState(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if got := FreshID(read, "provider-a", "evt-1"); got != "evt-2" {
		t.Errorf("FreshID(provider-a, evt-1) after evt-1 and evt-9 = %q, want evt-2", got)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestStateSays: /state says in words whether each balance equals the sum
// of its inbox rows, and what the difference means.
func TestStateSays(t *testing.T) {
	st := State{Balances: map[int64]int64{1: 1000, 2: 0, 3: 0}, Inbox: []Row{
		{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}, {Source: "provider-a", EventID: "evt-2", AccountID: 3, Amount: 300}}}
	st.judge()
	want := []string{
		"account 1: balance 1000 does NOT equal the sum of its 1 inbox row (500): 500 was credited with no event behind it: an event applied more than once",
		"account 2: balance 0 equals the sum of its 0 inbox rows: every credit has its event, once",
		"account 3: balance 0 does NOT equal the sum of its 1 inbox row (300): 300 of recorded events was never credited",
	}
	if strings.Join(st.Says, "\n") != strings.Join(want, "\n") {
		t.Errorf("State.Says =\n%s\nwant\n%s", strings.Join(st.Says, "\n"), strings.Join(want, "\n"))
	}
}

// TestFreshID: a burst gets an id its source has not delivered.
func TestFreshID(t *testing.T) {
	st := State{Inbox: []Row{{Source: "provider-a", EventID: "evt-1"}, {Source: "provider-a", EventID: "evt-2"},
		{Source: "provider-b", EventID: "evt-3"}, {Source: "provider-a", EventID: "pay"}}}
	for _, tt := range []struct{ source, id, want string }{
		{"provider-a", "evt-1", "evt-3"}, {"provider-a", "evt-7", "evt-7"}, {"provider-b", "evt-1", "evt-1"},
		{"provider-b", "evt-3", "evt-4"}, {"provider-a", "pay", "pay-2"},
	} {
		if got := FreshID(st, tt.source, tt.id); got != tt.want {
			t.Errorf("FreshID(%s, %s) = %q, want %q", tt.source, tt.id, got, tt.want)
		}
	}
}

// openDemo opens the demo server of variant v on a database in the test's
// temporary directory, closed when the test ends.
func openDemo(t *testing.T, v lab.Variant) *Server {
	t.Helper()
	s, err := Open(v, filepath.Join(t.TempDir(), "demo.db"))
	if err != nil {
		t.Fatalf("Open(%s) = %v, want a server", v.Name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// providerKey is provider-a's signing key, as the demo's senders hold it.
func providerKey(t *testing.T) webhook.Secret {
	t.Helper()
	key, err := webhook.ParseSecret(Secrets["provider-a"])
	if err != nil {
		t.Fatalf("webhook.ParseSecret(provider-a's secret) = %v, want a key", err)
	}
	return key
}
