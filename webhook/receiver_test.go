package webhook_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/lab"
	"idemlab/webhook"
)

// stub is a lab.Processor that answers what it is told and remembers what
// it was asked, so that the receiver is tested without a database.
type stub struct {
	mu      sync.Mutex
	calls   []lab.Event
	outcome lab.Outcome
	err     error
}

func (s *stub) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, e)
	if err := e.Validate(); err != nil {
		return 0, err
	}
	return s.outcome, s.err
}

func (s *stub) called() []lab.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

var (
	secretA  = webhook.Secret([]byte("provider-a's secret, 32 bytes..."))
	secretA2 = webhook.Secret([]byte("provider-a's next secret, 32 b.."))
	secretB  = webhook.Secret([]byte("provider-b's secret, 32 bytes..."))
)

// endpointA is provider-a's endpoint: only its secrets verify here.
func endpointA() *webhook.Verifier {
	return &webhook.Verifier{Integrations: []webhook.Integration{{Source: "provider-a", Secrets: []webhook.Secret{secretA, secretA2}}}}
}

const okBody = `{"account_id":1,"amount":500}`

// signed returns a POST of body, signed now by secrets, as provider-a's
// client would send it.
func signed(id, body string, secrets ...webhook.Secret) *http.Request {
	req := httptest.NewRequest("POST", "/webhooks/provider-a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	webhook.SignRequest(req.Header, id, time.Now(), []byte(body), secrets...)
	return req
}

// serve runs one request through a receiver over p and returns the response.
func serve(p lab.Processor, auth webhook.Authenticator, req *http.Request) *http.Response {
	rc := webhook.NewReceiver(p, auth)
	rc.Log = slog.New(slog.DiscardHandler)
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, req)
	return w.Result()
}

func problemType(t *testing.T, resp *http.Response) string {
	t.Helper()
	var p webhook.Problem
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("status %d: Content-Type = %q, want application/problem+json", resp.StatusCode, ct)
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Errorf("status %d: problem body: %v", resp.StatusCode, err)
	}
	if p.Status != resp.StatusCode {
		t.Errorf("problem status = %d, want %d", p.Status, resp.StatusCode)
	}
	return strings.TrimPrefix(p.Type, webhook.ProblemType)
}

// statusCases are the processor's answers and what the receiver must make
// of them: the status table of docs/http.md (TestReadmeStatusTable).
var statusCases = []struct {
	name    string // as docs/http.md's status table names it
	outcome lab.Outcome
	err     error
	status  int
	problem string // the problem type, "" for a 2xx
}{
	{"applied", lab.Applied, nil, 200, ""},
	{"duplicate", lab.Duplicate, nil, 200, ""},
	{"payload conflict", 0, fmt.Errorf("%w: evt-1 was applied with amount 500", lab.ErrPayloadConflict), 422, "payload-conflict"},
	{"invalid event", 0, fmt.Errorf("%w: refused by the schema", lab.ErrInvalidEvent), 400, "invalid-event"},
	{"unknown account", 0, fmt.Errorf("%w: FOREIGN KEY constraint failed", lab.ErrUnknownAccount), 422, "unknown-account"},
	{"busy", 0, fmt.Errorf("%w: database is locked (5)", lab.ErrBusy), 503, "busy"},
	{"deadline passed", 0, lab.Classify(context.DeadlineExceeded), 503, "busy"},
	{"client gone", 0, lab.Classify(context.Canceled), 503, "busy"},
	{"other error", 0, errors.New("disk I/O error (10)"), 500, "outcome-unknown"},
	{"COMMIT failed", 0, fmt.Errorf("commit: %w", sql.ErrTxDone), 500, "outcome-unknown"},
	{"no outcome", 0, nil, 500, "outcome-unknown"},
}

// TestStatuses checks the status of every outcome, and that no answer is
// a redirect or 410 Gone.
func TestStatuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range statusCases {
			p := &stub{outcome: c.outcome, err: c.err}
			resp := serve(p, endpointA(), signed("evt-1", okBody, secretA))
			if resp.StatusCode != c.status {
				t.Errorf("%s: status = %d, want %d", c.name, resp.StatusCode, c.status)
			}
			if resp.StatusCode/100 == 3 || resp.StatusCode == http.StatusGone {
				t.Errorf("%s: status = %d, want never a 3xx nor 410", c.name, resp.StatusCode)
			}
			if c.problem != "" {
				if got := problemType(t, resp); got != c.problem {
					t.Errorf("%s: problem type = %q, want %q", c.name, got, c.problem)
				}
			} else {
				var a webhook.Answer
				if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || a.Outcome != c.outcome.String() ||
					a.Source != "provider-a" || a.EventID != "evt-1" {
					t.Errorf("%s: answer = %+v (%v), want %s for provider-a/evt-1", c.name, a, err, c.outcome)
				}
			}
			replayed := resp.Header.Get(webhook.HeaderReplayed) == "true"
			if replayed != (c.outcome == lab.Duplicate && c.err == nil) {
				t.Errorf("%s: %s = %q, want it set on a duplicate only", c.name, webhook.HeaderReplayed, resp.Header.Get(webhook.HeaderReplayed))
			}
			if got := resp.Header.Get("Retry-After"); (got != "") != (c.status == 503) {
				t.Errorf("%s: Retry-After = %q, want it on a 503 only", c.name, got)
			} else if c.status == 503 && got != "10" {
				t.Errorf("%s: Retry-After = %q, want 10 (seconds, the default)", c.name, got)
			}
		}
	})
}

// TestEventFromRequest checks what the processor is given: the source of
// the secret that verified, the key from the signed webhook-id.
func TestEventFromRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &stub{outcome: lab.Applied}
		body := `{"event_id":"evt-7","source":"provider-a","account_id":2,"amount":700}`
		resp := serve(p, endpointA(), signed("evt-7", body, secretA2))
		want := lab.Event{Source: "provider-a", EventID: "evt-7", AccountID: 2, Amount: 700}
		if got := p.called(); resp.StatusCode != 200 || len(got) != 1 || got[0] != want {
			t.Errorf("POST %s: status %d, Process calls %v, want 200 and [%v]", body, resp.StatusCode, got, want)
		}
	})
}

// TestRefusedBeforeProcessing sends requests that must be refused before
// the processor runs: nothing is written because nothing is asked.
func TestRefusedBeforeProcessing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big := `{"account_id":1,"amount":500,"pad":"` + strings.Repeat("x", webhook.DefaultMaxBody) + `"}`
		cases := []struct {
			name    string
			req     func() *http.Request
			status  int
			problem string
		}{
			{"GET", func() *http.Request { return httptest.NewRequest("GET", "/", nil) }, 405, "method-not-allowed"},
			{"PUT", func() *http.Request { r := signed("evt-1", okBody, secretA); r.Method = "PUT"; return r }, 405, "method-not-allowed"},
			{"text/plain", func() *http.Request {
				r := signed("evt-1", okBody, secretA)
				r.Header.Set("Content-Type", "text/plain")
				return r
			}, 415, "unsupported-media-type"},
			{"no content type", func() *http.Request {
				r := signed("evt-1", okBody, secretA)
				r.Header.Del("Content-Type")
				return r
			}, 415, "unsupported-media-type"},
			{"latin-1", func() *http.Request {
				r := signed("evt-1", okBody, secretA)
				r.Header.Set("Content-Type", "application/json; charset=iso-8859-1")
				return r
			}, 415, "unsupported-media-type"},
			{"oversized, announced", func() *http.Request { return signed("evt-1", big, secretA) }, 413, "too-large"},
			{"oversized, chunked", func() *http.Request {
				r := signed("evt-1", big, secretA)
				r.ContentLength = -1
				return r
			}, 413, "too-large"},
		}
		for _, c := range cases {
			p := &stub{outcome: lab.Applied}
			resp := serve(p, endpointA(), c.req())
			if resp.StatusCode != c.status {
				t.Errorf("%s: status = %d, want %d", c.name, resp.StatusCode, c.status)
			}
			if got := problemType(t, resp); got != c.problem {
				t.Errorf("%s: problem type = %q, want %q", c.name, got, c.problem)
			}
			if calls := p.called(); len(calls) != 0 {
				t.Errorf("%s: Process called with %v, want never", c.name, calls)
			}
		}
	})
}

// TestCharsetNames accepts UTF-8 however its name is spelled: charset names
// are case-insensitive (RFC 9110 §8.3.2). A receiver that compared them as
// written answered 415 to "Utf-8".
func TestCharsetNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, ct := range []string{"application/json", "application/json; charset=utf-8",
			"application/json; charset=UTF-8", "application/json; charset=Utf-8", `application/json; charset="utf-8"`} {
			r := signed("evt-1", okBody, secretA)
			r.Header.Set("Content-Type", ct)
			p := &stub{outcome: lab.Applied}
			if resp := serve(p, endpointA(), r); resp.StatusCode != http.StatusOK {
				t.Errorf("Content-Type %q: status = %d, want 200", ct, resp.StatusCode)
			}
		}
	})
}

// TestMalformedBodies sends signed bodies that DecodeBody must refuse:
// 400, and the processor never runs.
func TestMalformedBodies(t *testing.T) {
	bodies := []string{
		``,
		`null`,
		`[]`,
		`"evt-1"`,
		`{"account_id":1,"amount":500`,
		`{"account_id":1,"amount":500}{}`,
		`{"account_id":1,"amount":500} x`,
		`{"account_id":1}`,
		`{"amount":500}`,
		`{"account_id":1,"amount":500,"currency":"EUR"}`,
		`{"account_id":1,"AMOUNT":500}`,
		`{"account_id":1,"amount":500,"amount":5}`,
		`{"account_id":1,"amount":"500"}`,
		`{"account_id":1,"amount":2.5}`,
		`{"account_id":1,"amount":5e2}`,
		`{"account_id":1,"amount":null}`,
		`{"account_id":1,"amount":true}`,
		`{"account_id":1,"amount":[500]}`,
		`{"account_id":1,"amount":{"value":500}}`,
		`{"account_id":1,"amount":99999999999999999999}`,
		`{"account_id":"1","amount":500}`,
		`{"account_id":1,"amount":500,"event_id":7}`,
		`{"account_id":1,"amount":500,"source":null}`,
		"\xef\xbb\xbf" + okBody, // a byte order mark
		"{\"account_id\":1,\"amount\":500,\"event_id\":\"evt-\xff\"}",
		`{"account_id":1,"amount":500,"event_id":"evt-2"}`, // not the signed id
	}
	synctest.Test(t, func(t *testing.T) {
		for _, body := range bodies {
			p := &stub{outcome: lab.Applied}
			resp := serve(p, endpointA(), signed("evt-1", body, secretA))
			if resp.StatusCode != 400 {
				t.Errorf("POST %q: status = %d, want 400", body, resp.StatusCode)
			}
			if got := problemType(t, resp); got != "malformed" {
				t.Errorf("POST %q: problem type = %q, want malformed", body, got)
			}
			if calls := p.called(); len(calls) != 0 {
				t.Errorf("POST %q: Process called with %v, want never", body, calls)
			}
		}
	})
}

// TestInvalidEvents sends well-formed bodies whose event the processor's
// validation refuses, and a signed request without a key: 400.
func TestInvalidEvents(t *testing.T) {
	cases := []struct{ id, body string }{
		{"", okBody}, // no webhook-id: signed over an empty id, no key
		{strings.Repeat("e", lab.MaxKeyBytes+1), okBody},
		{"evt-1", `{"account_id":0,"amount":500}`},
		{"evt-1", `{"account_id":1,"amount":0}`},
		{"evt-1", `{"account_id":1,"amount":-5}`},
		{"evt-1", `{"account_id":1,"amount":1000000001}`},
	}
	synctest.Test(t, func(t *testing.T) {
		for _, c := range cases {
			p := &stub{outcome: lab.Applied}
			req := signed(c.id, c.body, secretA)
			if c.id == "" {
				req.Header.Del(webhook.HeaderID)
			}
			resp := serve(p, endpointA(), req)
			if resp.StatusCode != 400 || problemType(t, resp) != "invalid-event" {
				t.Errorf("POST id %.20q %s: status = %d, want 400 invalid-event", c.id, c.body, resp.StatusCode)
			}
		}
	})
}

// TestBodyReadOnce makes sure the signature is checked over the very bytes
// that are decoded: a body that a reader serves differently twice could
// otherwise be verified in one form and applied in another.
func TestBodyReadOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &stub{outcome: lab.Applied}
		req := signed("evt-1", okBody, secretA)
		req.Body = io.NopCloser(io.MultiReader(strings.NewReader(okBody), strings.NewReader(" ")))
		req.ContentLength = -1
		resp := serve(p, endpointA(), req)
		if resp.StatusCode != 401 {
			t.Errorf("signed body plus one byte: status = %d, want 401", resp.StatusCode)
		}
	})
}

// TestExactPaths answers a path it does not know, or a path that a mux
// would clean and redirect, with 404, never a 3xx.
func TestExactPaths(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := webhook.ExactPaths(map[string]http.Handler{"/webhooks/a": ok})
	for path, want := range map[string]int{"/webhooks/a": 204, "/webhooks/a/": 404, "//webhooks/a": 404, "/webhooks/./a": 404, "/": 404} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "http://x"+path, nil))
		if w.Code != want {
			t.Errorf("ExactPaths(%q) = %d, want %d", path, w.Code, want)
		}
	}
}

// TestContentEncoding: the receiver decodes no content coding, so a body
// sent with one is refused with 415 before anything else is read (RFC 9110
// §15.5.16), and the answer's Accept-Encoding: identity says the coding was
// the trouble (§12.5.3), which a 415 for the media type must not say.
// Codings are case-insensitive (§8.4.1); identity, which means none, is
// accepted however it is spelled.
func TestContentEncoding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct {
			encoding []string // Content-Encoding field lines
			status   int
		}{
			{[]string{"gzip"}, 415},
			{[]string{"GZIP"}, 415},
			{[]string{"br"}, 415},
			{[]string{"deflate, identity"}, 415},
			{[]string{"identity", "gzip"}, 415},
			{[]string{""}, 200},
			{[]string{"identity, "}, 200},
			{[]string{"identity"}, 200},
			{[]string{"Identity"}, 200},
		} {
			p := &stub{outcome: lab.Applied}
			r := signed("evt-1", okBody, secretA)
			r.Header["Content-Encoding"] = c.encoding
			resp := serve(p, endpointA(), r)
			if resp.StatusCode != c.status {
				t.Errorf("Content-Encoding %q: status = %d, want %d", c.encoding, resp.StatusCode, c.status)
			}
			if c.status != 415 {
				continue
			}
			if got := problemType(t, resp); got != "unsupported-media-type" {
				t.Errorf("Content-Encoding %q: problem type = %q, want unsupported-media-type", c.encoding, got)
			}
			if got := resp.Header.Get("Accept-Encoding"); got != "identity" {
				t.Errorf("Content-Encoding %q: Accept-Encoding = %q, want identity", c.encoding, got)
			}
			if calls := p.called(); len(calls) != 0 {
				t.Errorf("Content-Encoding %q: Process called with %v, want never", c.encoding, calls)
			}
		}
		r := signed("evt-1", okBody, secretA)
		r.Header.Set("Content-Type", "text/plain")
		if resp := serve(&stub{outcome: lab.Applied}, endpointA(), r); resp.StatusCode != 415 || resp.Header.Get("Accept-Encoding") != "" {
			t.Errorf("Content-Type text/plain: status %d, Accept-Encoding %q, want 415 without Accept-Encoding", resp.StatusCode, resp.Header.Get("Accept-Encoding"))
		}
	})
}
