package scenarios

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/webhook"
)

// The HTTP scenarios serve the variant behind a webhook.Receiver, one
// endpoint per provider (/webhooks/provider-a, …, each verifying only its
// own provider's secret), on an in-memory network inside the bubble, and
// play the providers with webhook.Provider: signed requests, a 15 s
// timeout per attempt, Svix's retry schedule. Every wait — a client's
// timeout, a retry 27 hours later, a lock wait — runs on the fake clock.

// providerSecrets are the integrations the receiver trusts.
var providerSecrets = map[string]webhook.Secret{
	"provider-a": webhook.Secret("provider-a's signing secret, 32 b"),
	"provider-b": webhook.Secret("provider-b's signing secret, 32 b"),
	"provider-c": webhook.Secret("provider-c's signing secret, 32 b"),
}

// rig is a variant served over HTTP.
type rig struct {
	r         *labtest.Run
	db        *labtest.DB
	net       *labtest.Network
	receivers map[string]*webhook.Receiver
	calls     *countingProcessor
}

// countingProcessor counts the calls that reach the variant.
type countingProcessor struct {
	lab.Processor
	mu sync.Mutex
	n  int
}

func (c *countingProcessor) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.Processor.Process(ctx, e)
}

func (c *countingProcessor) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// serveHTTP opens a database seeded with accounts and serves it. The
// caller must close the rig.
func serveHTTP(r *labtest.Run, accounts ...labtest.Account) *rig {
	g := &rig{r: r, db: r.Open(accounts...), receivers: map[string]*webhook.Receiver{}}
	g.calls = &countingProcessor{Processor: g.db.Processor()}
	routes := map[string]http.Handler{}
	for source, secret := range providerSecrets {
		rc := webhook.NewReceiver(g.calls, &webhook.Verifier{
			Integrations: []webhook.Integration{{Source: source, Secrets: []webhook.Secret{secret}}}})
		rc.Log = slog.New(slog.DiscardHandler)
		g.receivers["/webhooks/"+source], routes["/webhooks/"+source] = rc, rc
	}
	g.net = labtest.Serve(labtest.SessionHandler(webhook.ExactPaths(routes)))
	return g
}

func (g *rig) close() { g.net.Shutdown() }

// retryAfter sets what every receiver's 503 asks for.
func (g *rig) retryAfter(d time.Duration) {
	for _, rc := range g.receivers {
		rc.RetryAfter = d
	}
}

// provider returns a sender for source on the rig's network, with jitter
// drawn from a source seeded by seed, so that every run is the same.
func (g *rig) provider(source string, seed uint64) *webhook.Provider {
	p := webhook.NewProvider("http://receiver/webhooks/"+source, providerSecrets[source])
	p.Client = g.net.Client()
	p.Rand = rand.New(rand.NewPCG(seed, 1))
	return p
}

// body is the JSON of a credit.
func body(e lab.Event) []byte {
	return fmt.Appendf(nil, `{"account_id":%d,"amount":%d}`, e.AccountID, e.Amount)
}

// send delivers e with p and notes the attempts in the transcript.
func (g *rig) send(ctx context.Context, p *webhook.Provider, e lab.Event) webhook.Delivery {
	d := p.Send(ctx, e.EventID, body(e))
	g.r.Transcript.Note(labtest.SessionOf(ctx), e.Source+" sends "+e.String(), attempts(d))
	return d
}

// attempts renders a delivery's attempts with their fake-clock offsets.
func attempts(d webhook.Delivery) string {
	var parts []string
	for _, a := range d.Attempts {
		parts = append(parts, fmt.Sprintf("%s at +%v", a, a.At.Sub(d.Attempts[0].At).Round(time.Millisecond)))
	}
	return strings.Join(parts, "; ")
}

// LostResponse is the article's opening story over HTTP. The receiver
// applies the event and answers 200, and the answer is lost on the way:
// the provider waits out its 15 s timeout and retries 5 s later. The retry
// must get 200 marked as a replay, and the balance must have moved once.
// Then a provider that gives up after 2 s while the receiver waits for a
// lock held elsewhere: its disconnect cancels the request's context, the
// uncommitted transaction rolls back (busy, answered to no one, never a
// duplicate), and the retry applies the event once.
func LostResponse(r *labtest.Run) {
	g := serveHTTP(r)
	defer g.close()
	e := credit("evt-1", 500)
	g.net.LoseResponses(1)
	d := g.send(context.Background(), g.provider("provider-a", 1), e)
	if len(d.Attempts) != 2 || d.Attempts[0].Err == nil || !d.Delivered || !d.Last().Replayed {
		r.Errorf("Send(%v) with the first answer lost = %s, want no answer, then 200 replayed", e, attempts(d))
	}
	r.WantBalance(g.db, 1, 500)
	r.WantInbox(g.db, 1)

	// The client leaves mid-request.
	e2 := credit("evt-2", 300)
	release := g.db.HoldWriteLock()
	p := g.provider("provider-a", 2)
	p.Timeout = 2 * time.Second
	done := make(chan webhook.Delivery)
	go func() { done <- g.send(context.Background(), p, e2) }()
	time.Sleep(3 * time.Second) // the fake clock: the provider has given up, its retry is due at 7 s
	r.WantInbox(g.db, 1)
	release()
	d2 := <-done
	// Unless the variant answered busy at once (naive/deferred does, and
	// 503 is the honest answer), the provider left before any answer.
	if len(d2.Attempts) == 0 || d2.Attempts[0].OK() || !d2.Delivered || d2.Last().Replayed {
		r.Errorf("Send(%v) by a provider that left mid-request = %s, want no answer (or 503), then 200 applied", e2, attempts(d2))
	}
	r.WantBalance(g.db, 1, 800)
	r.WantInbox(g.db, 2)
	r.Notef("answer lost after COMMIT: the retry got 200 replayed; a provider that left while the lock was held: rolled back, its retry applied; balance 800")
}

// RetryAfterBusy holds the write lock elsewhere while an event arrives.
// The receiver waits its busy timeout, answers 503 with Retry-After: 30,
// and the provider waits those 30 s (not the 5 s of its schedule) and
// sends again, by when the lock is free: applied once. A receiver that
// answered 200 to a busy database would end the provider's retries with
// the event never applied.
//
// The scenario sets 30 s on its receivers on purpose, where a receiver
// asks for webhook.DefaultRetryAfter (10 s) unless told otherwise: the
// provider's schedule retries 5 s after the 503 anyway, and a wait of 30 s
// cannot be mistaken for the schedule's, so the second attempt's time
// shows that the provider waited because the header asked.
func RetryAfterBusy(r *labtest.Run) {
	g := serveHTTP(r)
	defer g.close()
	g.retryAfter(30 * time.Second)
	e := credit("evt-4", 500)
	release := g.db.HoldWriteLock()
	done := make(chan webhook.Delivery)
	go func() { done <- g.send(context.Background(), g.provider("provider-a", 3), e) }()
	time.Sleep(10 * time.Second) // the fake clock: the first answer is in, the retry not due
	release()
	d := <-done
	if len(d.Attempts) < 1 || d.Attempts[0].Status != http.StatusServiceUnavailable || d.Attempts[0].RetryAfter != 30*time.Second {
		r.Errorf("Send(%v) while the lock is held: first attempt %s, want 503 with Retry-After 30s", e, attempts(d))
	} else if len(d.Attempts) != 2 || !d.Delivered || d.Last().Replayed || d.Attempts[1].At.Sub(d.Attempts[0].At) < 30*time.Second {
		r.Errorf("Send(%v) after a 503 = %s, want 200 applied on the second attempt, 30 s or more later", e, attempts(d))
	}
	r.WantBalance(g.db, 1, 500)
	r.WantInbox(g.db, 1)
	r.Notef("locked: 503 Retry-After 30s (set by the scenario; a receiver's default is 10s); the provider waited 30 s, retried: applied once; balance 500")
}

// ConflictOverHTTP delivers evt-5 with 500, then a provider with a bug
// sends evt-5 again with 700. The receiver answers 422 (problem+json) to
// every attempt. The provider's policy is Standard Webhooks': it retries
// every failure but 410, so it sends the conflict eight times over 27
// hours of fake time; the balance never moves a second time.
func ConflictOverHTTP(r *labtest.Run) {
	g := serveHTTP(r)
	defer g.close()
	e := credit("evt-5", 500)
	if d := g.send(context.Background(), g.provider("provider-a", 4), e); !d.Delivered {
		r.Errorf("Send(%v) = %s, want 200", e, attempts(d))
	}
	bad := credit("evt-5", 700)
	d := g.send(context.Background(), g.provider("provider-a", 5), bad)
	for _, a := range d.Attempts {
		if a.Status != http.StatusUnprocessableEntity {
			r.Errorf("Send(%v) after evt-5 applied with 500 = %s, want 422 on every attempt", bad, attempts(d))
			break
		}
	}
	if len(d.Attempts) != len(webhook.SvixSchedule) || d.Delivered {
		r.Errorf("Send(%v): %d attempts, delivered %v, want %d, not delivered", bad, len(d.Attempts), d.Delivered, len(webhook.SvixSchedule))
	}
	r.WantBalance(g.db, 1, 500)
	r.WantInbox(g.db, 1)
	r.Notef("evt-5 again with 700: 422 on all 8 attempts over 27 h; balance 500")
}

// Forged sends requests that are not provider-a's to provider-a's
// endpoint: unsigned, signed by an unknown secret, by provider-b (cross
// source), stale, from the future, with a changed body or id, claiming
// provider-b in the body; then a flood of 32 bad signatures at once. Each
// gets 401, none reaches the variant (so none can lock the database or
// take an event id first), and then the genuine evt-1 applies.
func Forged(r *labtest.Run) {
	g := serveHTTP(r, labtest.Account{ID: 1}, labtest.Account{ID: 2})
	defer g.close()
	client := g.net.Client()
	url := "http://receiver/webhooks/provider-a"
	genuine := body(credit("evt-1", 500))
	attacker := webhook.Secret("not a secret anyone gave us, 32 b")
	now := time.Now()
	forge := func(id string, at time.Time, data []byte, secrets ...webhook.Secret) func(h http.Header) []byte {
		return func(h http.Header) []byte {
			webhook.SignRequest(h, id, at, data, secrets...)
			return data
		}
	}
	cases := []struct {
		name string
		make func(h http.Header) []byte
	}{
		{"unsigned", func(h http.Header) []byte { return genuine }},
		{"signed by an unknown secret", forge("evt-1", now, genuine, attacker)},
		{"signed by provider-b (cross-source)", forge("evt-1", now, genuine, providerSecrets["provider-b"])},
		{"stale: signed 10 minutes ago", forge("evt-1", now.Add(-10*time.Minute), genuine, providerSecrets["provider-a"])},
		{"signed 10 minutes ahead", forge("evt-1", now.Add(10*time.Minute), genuine, providerSecrets["provider-a"])},
		{"the body changed after signing", func(h http.Header) []byte {
			forge("evt-1", now, genuine, providerSecrets["provider-a"])(h)
			return body(lab.Event{AccountID: 2, Amount: 500})
		}},
		{"the id changed after signing", func(h http.Header) []byte {
			forge("evt-0", now, genuine, providerSecrets["provider-a"])(h)
			h.Set(webhook.HeaderID, "evt-1")
			return genuine
		}},
		{"a signed body naming provider-b", forge("evt-1", now, []byte(`{"source":"provider-b","account_id":1,"amount":500}`), providerSecrets["provider-a"])},
	}
	post := func(build func(h http.Header) []byte) int {
		h := http.Header{"Content-Type": {"application/json"}}
		data := build(h)
		req, _ := http.NewRequest("POST", url, strings.NewReader(string(data)))
		req.Header = h
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range cases {
		if got := post(c.make); got != http.StatusUnauthorized {
			r.Errorf("POST %s: status %d, want 401", c.name, got)
		}
	}
	var wg sync.WaitGroup
	statuses := make([]int, 32)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = post(forge(fmt.Sprintf("evt-%d", i), now, genuine, attacker))
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusUnauthorized {
			r.Errorf("flood request %d: status %d, want 401", i, s)
			break
		}
	}
	if n := g.calls.count(); n != 0 {
		r.Errorf("%d forged requests reached the handler, want none", n)
	}
	r.WantInbox(g.db, 0)
	e := credit("evt-1", 500)
	if d := g.send(context.Background(), g.provider("provider-a", 6), e); !d.Delivered || d.Last().Replayed {
		r.Errorf("Send(%v) after the forgeries = %s, want 200 applied", e, attempts(d))
	}
	r.WantBalance(g.db, 1, 500)
	r.Notef("%d forgeries and a flood of 32: all 401, none reached the handler; the genuine evt-1 applied", len(cases))
}

// Burst sends many signed deliveries at once from three providers, with
// duplicates: provider-a's evt-1 three times and evt-2 twice, provider-b's
// evt-1 (another event: another source) three times, provider-c's evt-9
// twice. The scheduler steps the receivers' statements round robin, so
// every delivery in flight takes its first statement before any takes its
// second. A delivery that fails is retried after a second, three times.
// Every event is applied once, every delivery ends in a 2xx, and no attempt
// is answered 5xx.
func Burst(r *labtest.Run) {
	g := serveHTTP(r, labtest.Account{ID: 1}, labtest.Account{ID: 2}, labtest.Account{ID: 3})
	defer g.close()
	g.retryAfter(time.Second)
	a1, a2 := credit("evt-1", 500), credit("evt-2", 300)
	b1 := lab.Event{Source: "provider-b", EventID: "evt-1", AccountID: 2, Amount: 700}
	c9 := lab.Event{Source: "provider-c", EventID: "evt-9", AccountID: 3, Amount: 100}
	events := []lab.Event{a1, b1, c9, a2, a1, b1, c9, a2, a1, b1}
	results := make([]webhook.Delivery, len(events))
	var bodies []func(ctx context.Context)
	for i, e := range events {
		p := g.provider(e.Source, uint64(10+i))
		// A compressed schedule: the burst is about deliveries at once,
		// and the scheduler moves the fake clock a millisecond at a time
		// while a session waits (see RunSessions), so hours would cost.
		p.Schedule = []time.Duration{0, time.Second, time.Second, time.Second}
		bodies = append(bodies, func(ctx context.Context) { results[i] = g.send(ctx, p, e) })
	}
	answers := g.db.RunSessions(bodies...)
	applied := map[lab.Key]int{}
	for _, a := range answers {
		if a.Err == nil && a.Outcome == lab.Applied {
			applied[a.Event.Key()]++
		}
	}
	for _, e := range []lab.Event{a1, a2, b1, c9} {
		if applied[e.Key()] != 1 {
			r.Errorf("%v applied %d times over HTTP, want once", e.Key(), applied[e.Key()])
		}
	}
	fives := 0
	for i, d := range results {
		if !d.Delivered {
			r.Errorf("Send(%v) in the burst = %s, want a 2xx", events[i], attempts(d))
		}
		for _, a := range d.Attempts {
			if a.Status >= 500 {
				fives++
			}
		}
	}
	if fives > 0 {
		r.Errorf("%d attempts in the burst were answered 5xx, want none", fives)
	}
	r.WantBalance(g.db, 1, 800)
	r.WantBalance(g.db, 2, 700)
	r.WantBalance(g.db, 3, 100)
	r.WantInbox(g.db, 4)
	r.Notef("%d deliveries of 4 events from 3 providers at once: each applied once, every delivery 2xx, no 5xx", len(events))
}
