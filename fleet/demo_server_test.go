package fleet

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/webhook"
)

// TestBurst sends Events distinct signed events from Senders senders at
// once to the demo's handler, in-process, on the correct variant with its
// busy timeout cut from 5 s to BusyTimeout, so that a burst that outwaits
// it takes a second, not a minute: the pool is what is tested, not the
// timeout. On a pool of one connection, as correct's doc recommends,
// deliveries queue in database/sql and none is busy; with a connection per
// sender they poll SQLite's lock, and a writer that keeps losing the race
// answers 503 busy.
func TestBurst(t *testing.T) {
	const (
		Senders     = 64
		Events      = 640
		BusyTimeout = 100 // ms
	)
	was := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler)) // a line per request and per refusal
	defer slog.SetDefault(was)
	v, err := Variant("correct")
	if err != nil {
		t.Fatal(err)
	}
	dsn := v.DSN
	v.DSN = func(path string) string {
		d := dsn(path)
		if !strings.Contains(d, "busy_timeout(5000)") {
			t.Fatalf("correct's DSN %q has no busy_timeout(5000) to cut", d)
		}
		return strings.Replace(d, "busy_timeout(5000)", fmt.Sprintf("busy_timeout(%d)", BusyTimeout), 1)
	}
	s := openDemo(t, v)
	key := providerKey(t)
	var next atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int{}
	start := time.Now()
	var wg sync.WaitGroup
	for range Senders {
		wg.Go(func() {
			for {
				e := next.Add(1)
				if e > Events {
					return
				}
				body := Body(Accounts[e%int64(len(Accounts))], e)
				req := httptest.NewRequest(http.MethodPost, "/webhooks/provider-a", strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				webhook.SignRequest(req.Header, fmt.Sprintf("evt-%d", e), time.Now(), body, key)
				w := httptest.NewRecorder()
				s.handler.ServeHTTP(w, req)
				mu.Lock()
				statuses[w.Code]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d events from %d senders in %v: %v", Events, Senders, time.Since(start).Round(time.Millisecond), statuses)
	if statuses[http.StatusOK] != Events {
		t.Errorf("%d events from %d senders at once: answers %v, want %d × 200", Events, Senders, statuses, Events)
	}
}

// deadlineWriter is a ResponseWriter that can set a read deadline, as
// net/http's own can: it records the deadline it was given.
type deadlineWriter struct {
	*httptest.ResponseRecorder
	deadline time.Time
}

func (w *deadlineWriter) SetReadDeadline(t time.Time) error {
	w.deadline = t
	return nil
}

// TestBodyDeadlineReachesTheConnection: the receiver bounds the read of a
// body by setting the connection's read deadline through
// http.ResponseController, which needs every ResponseWriter wrapped around
// the server's to unwrap to it. The demo's request log wraps it; a wrapper
// that hid it would let a body trickle in for as long as its sender liked.
func TestBodyDeadlineReachesTheConnection(t *testing.T) {
	was := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	defer slog.SetDefault(was)
	v, err := Variant("correct")
	if err != nil {
		t.Fatal(err)
	}
	s := openDemo(t, v)
	key := providerKey(t)
	body := Body(1, 500)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/provider-a", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	webhook.SignRequest(req.Header, "evt-1", time.Now(), body, key)
	w := &deadlineWriter{ResponseRecorder: httptest.NewRecorder()}
	before := time.Now()
	s.handler.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Errorf("POST /webhooks/provider-a = %d, want 200", w.Code)
	}
	if w.deadline.Before(before) || w.deadline.After(time.Now().Add(webhook.DefaultBodyTimeout)) {
		t.Errorf("POST /webhooks/provider-a: the connection's read deadline = %v, want within %v of the request", w.deadline, webhook.DefaultBodyTimeout)
	}
}
