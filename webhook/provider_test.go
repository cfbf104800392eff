package webhook_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/webhook"
)

// direct is a RoundTripper that serves each request with a handler in
// memory, honouring the request's context as a network client would: when
// it ends first, the attempt has no answer.
type direct struct{ h http.Handler }

func (d direct) RoundTrip(req *http.Request) (*http.Response, error) {
	done := make(chan *http.Response, 1)
	go func() {
		w := httptest.NewRecorder()
		d.h.ServeHTTP(w, req)
		done <- w.Result()
	}()
	select {
	case resp := <-done:
		return resp, nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// script answers the n-th request (from 0) with answers[n], or the last
// one; it records when each request came and whether it verified.
type script struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, r *http.Request)
	at      []time.Time
	paths   []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.at)
	s.at = append(s.at, time.Now())
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	s.answers[min(n, len(s.answers)-1)](w, r)
}

func status(code int, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
	}
}

func provider(s *script) *webhook.Provider {
	p := webhook.NewProvider("http://receiver.test/webhooks/provider-a", secretA)
	p.Client = &http.Client{Transport: direct{s}}
	p.Jitter = 0
	return p
}

// offsets returns the times of the requests, from the first.
func (s *script) offsets() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for _, t := range s.at {
		out = append(out, t.Sub(s.at[0]))
	}
	return out
}

// TestSvixSchedule: a receiver that always fails gets eight attempts, at
// Svix's offsets, and the delivery is not delivered.
func TestSvixSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter, *http.Request){status(500)}}
		d := provider(s).Send(t.Context(), "evt-1", []byte(okBody))
		want := []time.Duration{0, 5 * time.Second, 5*time.Minute + 5*time.Second, 35*time.Minute + 5*time.Second,
			2*time.Hour + 35*time.Minute + 5*time.Second, 7*time.Hour + 35*time.Minute + 5*time.Second,
			17*time.Hour + 35*time.Minute + 5*time.Second, 27*time.Hour + 35*time.Minute + 5*time.Second}
		if got := s.offsets(); !slices.Equal(got, want) {
			t.Errorf("Send to a receiver answering 500: attempts at %v, want %v", got, want)
		}
		if d.Delivered || d.Disabled || len(d.Attempts) != 8 {
			t.Errorf("Send = %+v, want 8 attempts, not delivered", d)
		}
	})
}

// TestJitter: each delay moves, by at most 10 %, and a seeded source
// repeats itself.
func TestJitter(t *testing.T) {
	run := func() []time.Duration {
		var got []time.Duration
		synctest.Test(t, func(t *testing.T) {
			s := &script{answers: []func(http.ResponseWriter, *http.Request){status(503)}}
			p := provider(s)
			p.Jitter, p.Rand = 0.1, rand.New(rand.NewPCG(1, 2))
			p.Send(t.Context(), "evt-1", []byte(okBody))
			got = s.offsets()
		})
		return got
	}
	a, b := run(), run()
	if !slices.Equal(a, b) {
		t.Errorf("two runs with one seed: %v and %v, want the same", a, b)
	}
	for i := 1; i < len(a); i++ {
		delay, nominal := a[i]-a[i-1], webhook.SvixSchedule[i]
		if delay == nominal || delay < nominal*9/10 || delay > nominal*11/10 {
			t.Errorf("delay %d = %v, want within 10%% of %v and not exactly it", i, delay, nominal)
		}
	}
}

// TestStopsOn2xx: the first 2xx ends the delivery; a replay mark is seen.
func TestStopsOn2xx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter, *http.Request){status(500), status(200, webhook.HeaderReplayed, "true")}}
		d := provider(s).Send(t.Context(), "evt-1", []byte(okBody))
		if !d.Delivered || len(d.Attempts) != 2 || !d.Last().Replayed {
			t.Errorf("Send = %+v, want delivered on the second attempt, replayed", d)
		}
	})
}

// TestRedirectIsFailure: a 3xx is a failure, and its Location is never
// followed.
func TestRedirectIsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter, *http.Request){status(307, "Location", "/elsewhere"), status(200)}}
		d := provider(s).Send(t.Context(), "evt-1", []byte(okBody))
		if got := statuses(d); !slices.Equal(got, []int{307, 200}) || slices.Contains(s.paths, "/elsewhere") {
			t.Errorf("Send: statuses %v, paths %v, want [307 200] and /elsewhere never asked", got, s.paths)
		}
	})
}

// TestGoneDisables: 410 stops the delivery and every later one.
func TestGoneDisables(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter, *http.Request){status(410)}}
		p := provider(s)
		d := p.Send(t.Context(), "evt-1", []byte(okBody))
		d2 := p.Send(t.Context(), "evt-2", []byte(okBody))
		if !d.Disabled || len(d.Attempts) != 1 || !d2.Disabled || len(d2.Attempts) != 0 {
			t.Errorf("Send after 410 = %+v then %+v, want disabled after one attempt, then none", d, d2)
		}
	})
}

// TestRetryAfter: a 503 asking for 60 s delays the next attempt to 60 s,
// where the schedule said 5 s; one asking for 1 s does not hasten it.
func TestRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter, *http.Request){
			status(503, "Retry-After", "60"), status(503, "Retry-After", "1"), status(200)}}
		d := provider(s).Send(t.Context(), "evt-1", []byte(okBody))
		want := []time.Duration{0, 60 * time.Second, 60*time.Second + 5*time.Minute}
		if got := s.offsets(); !slices.Equal(got, want) || !d.Delivered {
			t.Errorf("Send with Retry-After 60, then 1: attempts at %v (delivered %v), want %v", got, d.Delivered, want)
		}
	})
}

// TestTimeout: an attempt with no answer within the timeout fails, and
// the next one follows the schedule.
func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
		s := &script{answers: []func(http.ResponseWriter, *http.Request){hang, status(200)}}
		d := provider(s).Send(t.Context(), "evt-1", []byte(okBody))
		want := []time.Duration{0, webhook.DefaultTimeout + 5*time.Second}
		if got := s.offsets(); !slices.Equal(got, want) || d.Attempts[0].Err == nil || !d.Delivered {
			t.Errorf("Send to a receiver that hangs once: attempts at %v, %+v, want %v, no answer then delivered", got, d.Attempts, want)
		}
	})
}

// TestSignsEachAttempt: every attempt verifies, with the same id and its
// own timestamp; a retry 27 h later is still within tolerance because it
// is signed when it is sent.
func TestSignsEachAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var stamps []string
		verify := func(w http.ResponseWriter, r *http.Request) {
			body := []byte(okBody)
			source, id, err := endpointA().Authenticate(r.Header, body)
			stamps = append(stamps, r.Header.Get(webhook.HeaderTimestamp))
			if err != nil || source != "provider-a" || id != "evt-1" {
				t.Errorf("attempt %d: Authenticate = %q, %q, %v, want provider-a, evt-1", len(stamps), source, id, err)
			}
			w.WriteHeader(500)
		}
		s := &script{answers: []func(http.ResponseWriter, *http.Request){verify}}
		provider(s).Send(context.Background(), "evt-1", []byte(okBody))
		if len(slices.Compact(slices.Clone(stamps))) != 8 {
			t.Errorf("timestamps %v, want 8 different ones", stamps)
		}
	})
}

// TestRetryAfterDate: Retry-After may be an HTTP-date instead of a number
// of seconds (RFC 9110 §10.2.3), in any of the three forms a recipient
// must parse (§5.6.7). A 503 asking for a moment 60 s away delays the next
// attempt to it, where the schedule said 5 s; a date already past does not
// hasten the schedule's own delay. The date is read against the response's
// own Date when it has one, so a receiver whose clock is an hour fast asks
// for 60 s, not an hour and a minute.
func TestRetryAfterDate(t *testing.T) {
	for _, c := range []struct {
		name, layout string
		skew         time.Duration // the receiver's clock, ahead of the sender's; sends Date when not 0
	}{
		{"IMF-fixdate", http.TimeFormat, 0},
		{"rfc850-date", strings.Replace(time.RFC850, "MST", "GMT", 1), 0},
		{"asctime-date", time.ANSIC, 0},
		{"IMF-fixdate, the receiver's clock an hour fast", http.TimeFormat, time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				date := func(d time.Duration) string { return time.Now().Add(c.skew + d).UTC().Format(c.layout) }
				retryAt := func(d time.Duration) func(http.ResponseWriter, *http.Request) {
					return func(w http.ResponseWriter, r *http.Request) {
						if c.skew != 0 {
							w.Header().Set("Date", date(0))
						}
						status(503, "Retry-After", date(d))(w, r)
					}
				}
				s := &script{answers: []func(http.ResponseWriter, *http.Request){retryAt(60 * time.Second), retryAt(-time.Hour), status(200)}}
				d := provider(s).Send(t.Context(), "evt-1", []byte(okBody))
				want := []time.Duration{0, 60 * time.Second, 60*time.Second + 5*time.Minute}
				if got := s.offsets(); !slices.Equal(got, want) || !d.Delivered {
					t.Errorf("Send with Retry-After as %s 60 s ahead, then an hour ago: attempts at %v (delivered %v), want %v",
						c.name, got, d.Delivered, want)
				}
				if got := d.Attempts[0].RetryAfter; got != 60*time.Second {
					t.Errorf("Send with Retry-After as %s 60 s ahead: the attempt's RetryAfter = %v, want 1m0s", c.name, got)
				}
			})
		})
	}
}

// TestRetryAfterMalformed: a Retry-After that is neither delay-seconds
// (digits only) nor an HTTP-date is ignored, and the schedule's own delay
// stands.
func TestRetryAfterMalformed(t *testing.T) {
	for _, v := range []string{"-60", "+60", "60.0", "60s", "in a minute", "Fri, 31 Dec 1999", ""} {
		synctest.Test(t, func(t *testing.T) {
			s := &script{answers: []func(http.ResponseWriter, *http.Request){status(503, "Retry-After", v), status(200)}}
			d := provider(s).Send(t.Context(), "evt-1", []byte(okBody))
			want := []time.Duration{0, 5 * time.Second}
			if got := s.offsets(); !slices.Equal(got, want) || d.Attempts[0].RetryAfter != 0 {
				t.Errorf("Send with Retry-After %q: attempts at %v, the first's RetryAfter %v, want %v and 0", v, got, d.Attempts[0].RetryAfter, want)
			}
		})
	}
}

// statuses lists each attempt's status of d, 0 for no answer.
func statuses(d webhook.Delivery) []int {
	out := make([]int, len(d.Attempts))
	for i, a := range d.Attempts {
		out[i] = a.Status
	}
	return out
}
