package webhook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// SvixSchedule is when a sender following Svix's published schedule tries
// a delivery: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h
// after the attempt before — eight attempts over 27 h 35 min 5 s.
var SvixSchedule = []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Defaults of a Provider.
const (
	// DefaultTimeout: Standard Webhooks recommends 15 to 30 s per attempt.
	DefaultTimeout = 15 * time.Second
	// DefaultJitter: each delay moves by up to ±10 %, so that receivers that
	// failed together are not retried together.
	DefaultJitter = 0.1
)

// Provider plays the sender: it signs each attempt afresh (same webhook-id,
// new timestamp), counts only a 2xx as delivered, gives an attempt up after
// its own Timeout, and retries on its Schedule. Its policy is Standard
// Webhooks': every answer but a 2xx is a failure to retry — a 3xx too (it
// never follows a redirect), and a 4xx too, since a receiver may answer 422
// for an account it has yet to create; only 410 Gone stops it, and for
// good: the endpoint is disabled and nothing more is sent. A Retry-After
// header is honoured, as a number of seconds or as an HTTP-date: the next
// attempt comes no sooner than it asks (up to MaxRetryAfter), nor sooner
// than the schedule's own delay.
type Provider struct {
	URL     string
	Secrets []Secret // one signature per secret (two during a rotation)
	// Client sends the requests; nil means http.DefaultClient. Its
	// redirect policy is overridden: a redirect is never followed.
	Client *http.Client
	// Schedule is the delay before each attempt; nil means SvixSchedule.
	Schedule []time.Duration
	// Timeout bounds one attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// Jitter is the fraction by which each delay may move either way.
	Jitter float64
	// Rand draws the jitter; nil means math/rand/v2's global source. A
	// seeded one makes a simulation repeat exactly.
	Rand *rand.Rand
	// MaxRetryAfter caps how long a Retry-After can delay the next
	// attempt; 0 means one hour.
	MaxRetryAfter time.Duration

	disabled atomic.Bool
}

// NewProvider returns a provider for url that signs with secrets, on
// Svix's schedule with the default timeout and jitter.
func NewProvider(url string, secrets ...Secret) *Provider {
	return &Provider{URL: url, Secrets: secrets, Jitter: DefaultJitter}
}

// Attempt is one try of a delivery.
type Attempt struct {
	N          int           // 1, 2, …
	At         time.Time     // when it was sent
	Status     int           // 0 when no answer came
	Replayed   bool          // a 2xx marked Idempotent-Replayed
	RetryAfter time.Duration // what the answer's Retry-After asked, from when it came
	Err        error         // why no answer came: a timeout, a reset
}

// OK reports whether the attempt counts as delivered: a 2xx.
func (a Attempt) OK() bool { return a.Status >= 200 && a.Status < 300 }

// String renders the attempt as the kit's evidence shows it.
func (a Attempt) String() string {
	switch {
	case a.Err != nil:
		return fmt.Sprintf("#%d no answer: %v", a.N, a.Err)
	case a.Replayed:
		return fmt.Sprintf("#%d %d replayed", a.N, a.Status)
	case a.RetryAfter > 0:
		return fmt.Sprintf("#%d %d Retry-After %v", a.N, a.Status, a.RetryAfter)
	}
	return fmt.Sprintf("#%d %d", a.N, a.Status)
}

// Delivery is the story of one event sent until it was delivered, the
// schedule ran out, the endpoint was disabled, or the context ended.
type Delivery struct {
	ID        string
	Attempts  []Attempt
	Delivered bool // the last attempt got a 2xx
	Disabled  bool // the endpoint answered 410, now or before
}

// Last returns the last attempt, or the zero Attempt.
func (d Delivery) Last() Attempt {
	if len(d.Attempts) == 0 {
		return Attempt{}
	}
	return d.Attempts[len(d.Attempts)-1]
}

// Send delivers body under id, retrying on the schedule.
func (p *Provider) Send(ctx context.Context, id string, body []byte) Delivery {
	d := Delivery{ID: id}
	schedule := p.Schedule
	if schedule == nil {
		schedule = SvixSchedule
	}
	var after time.Duration // the last Retry-After
	for i, delay := range schedule {
		if p.disabled.Load() {
			d.Disabled = true
			return d
		}
		if wait := max(p.jitter(delay), after); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return d
			}
		}
		a := p.attempt(ctx, i+1, id, body)
		d.Attempts = append(d.Attempts, a)
		switch {
		case a.OK():
			d.Delivered = true
			return d
		case a.Status == http.StatusGone:
			p.disabled.Store(true)
			d.Disabled = true
			return d
		}
		after = a.RetryAfter
	}
	return d
}

// jitter moves d by up to ±Jitter of itself.
func (p *Provider) jitter(d time.Duration) time.Duration {
	if d <= 0 || p.Jitter <= 0 {
		return d
	}
	u := rand.Float64()
	if p.Rand != nil {
		u = p.Rand.Float64()
	}
	return d + time.Duration(float64(d)*p.Jitter*(2*u-1))
}

// attempt sends one signed request and reads its answer.
func (p *Provider) attempt(ctx context.Context, n int, id string, body []byte) Attempt {
	a := Attempt{N: n, At: time.Now()}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
	if err != nil {
		a.Err = err
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	SignRequest(req.Header, id, a.At, body, p.Secrets...)
	client := http.DefaultClient
	if p.Client != nil {
		client = p.Client
	}
	noRedirects := *client
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirects.Do(req)
	if err != nil {
		a.Err = err
		return a
	}
	// Read the answer whole (bounded) so the connection can be reused.
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if err != nil {
		a.Err = err // the status came, the rest did not: no answer
		return a
	}
	a.Status = resp.StatusCode
	a.Replayed = resp.Header.Get(HeaderReplayed) == "true"
	if wait := retryAfter(resp.Header, time.Now()); wait > 0 {
		limit := p.MaxRetryAfter
		if limit <= 0 {
			limit = time.Hour
		}
		a.RetryAfter = min(wait, limit)
	}
	return a
}

// retryAfter is how long a response's Retry-After asks the sender to wait,
// measured from now, when the response arrived: 0 when the field is
// missing or malformed, or names a moment already past. RFC 9110 §10.2.3
// allows either form: delay-seconds (1*DIGIT) or an HTTP-date, which a
// recipient parses in any of the three formats of §5.6.7 (http.ParseTime).
// A date is the receiver's clock, so it is read against the response's own
// Date when that parses: a receiver whose clock is off by an hour still
// asks for the delay it meant.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64 // longer than a Duration holds; the caller caps it
		}
		return time.Duration(s) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	return at.Sub(now)
}
