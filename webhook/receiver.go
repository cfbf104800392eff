package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"idemlab/lab"
)

// Defaults of a Receiver.
const (
	// DefaultMaxBody: an event is a few dozen bytes; Standard Webhooks asks
	// senders to stay under 20 kB.
	DefaultMaxBody = 64 << 10
	// DefaultDeadline: the processor must answer within 10 s. Senders give
	// up after 15 to 30 s (Standard Webhooks); answering 503 before they
	// do tells them "retry" instead of leaving them to guess.
	DefaultDeadline = 10 * time.Second
	// DefaultRetryAfter: what a busy answer asks the sender to wait. The
	// processor already waited its busy timeout for the lock.
	DefaultRetryAfter = 10 * time.Second
	// DefaultBodyTimeout: the body must be in within 5 s of the headers.
	// With the processor's 10 s, the answer comes within 15 s, the shortest
	// timeout Standard Webhooks recommends to senders; a body trickled
	// slower holds a connection and a goroutine for nothing.
	DefaultBodyTimeout = 5 * time.Second
)

// HeaderReplayed marks a 200 that answers a repeat: the event was applied
// by an earlier delivery and nothing changed now (Stripe's name for it).
const HeaderReplayed = "Idempotent-Replayed"

// Receiver is the webhook endpoint: an http.Handler that authenticates a
// POSTed event, hands it to a lab.Processor and answers its outcome.
//
// A status is a promise to the sender, which under Standard Webhooks counts
// every 2xx as delivered and retries everything else, except 410, which
// disables the endpoint for good. So:
//
//   - applied: 200. The event is durably ours: COMMIT has returned.
//   - duplicate: 200 with Idempotent-Replayed: true. Applied before;
//     the sender must stop, and the header tells its logs why nothing
//     moved.
//   - payload conflict: 422, problem+json. The key was used before with
//     another account or amount: the sender's bug, never a duplicate (the
//     IETF Idempotency-Key draft's answer). Retrying cannot help; a sender
//     that retries anyway changes nothing.
//   - invalid event, or no key: 400. The same bytes will never pass.
//   - unknown account: 422 with a problem type of its own, so an operator
//     can tell it from a conflict: the event may be fine and the account
//     missing here, and a retry after the account exists applies it.
//   - busy (the lock timed out, the deadline passed, the client left): 503
//     with Retry-After. Nothing is known about the event, which is neither
//     applied nor a duplicate: the retry decides.
//   - any other error (COMMIT itself failed, say): 500. The event may be
//     applied or not; only a retry can find out, and it is safe, so the
//     answer must not be 2xx.
//   - never a 3xx and never 410: a sender would read 410 as "stop sending
//     forever", and a redirect as a failure anyway.
//
// Before the processor runs: 405 for a method other than POST, 415 for a
// content type other than application/json or a content coding other than
// identity (RFC 9110 §15.5.16; the receiver decodes none, and says so with
// Accept-Encoding: identity, §12.5.3), 413 for a body over MaxBody, 408
// for a body not in within BodyTimeout, 401 when the signature does not
// verify (the Authenticator's error), 400 for a body DecodeBody refuses.
// None of them touches the database.
//
// The processor runs with the request's context, bounded by Deadline. A
// sender that disconnects cancels it: a transaction not yet committed is
// rolled back (the processor answers busy, to no one), one already
// committed stands. Either is safe, because the sender that gave up will
// retry, and the retry applies the event or finds it a duplicate. Going on
// without the sender would only hold the write lock for an answer nobody
// reads.
type Receiver struct {
	Processor lab.Processor
	Auth      Authenticator
	// MaxBody, Deadline, RetryAfter and BodyTimeout default to the
	// constants above.
	MaxBody    int64
	Deadline   time.Duration
	RetryAfter time.Duration
	// BodyTimeout bounds the read of the body, from when ServeHTTP is
	// called. It is set as the connection's read deadline through
	// http.ResponseController, so the server (or a wrapper of the
	// ResponseWriter, through its Unwrap method) must support that; the
	// server's ReadHeaderTimeout bounds the headers before it.
	BodyTimeout time.Duration
	// Log receives a record for every answer that is not a success; nil
	// means slog.Default().
	Log *slog.Logger
}

// ExactPaths serves each request with the handler of exactly its path, and
// 404 otherwise. It is what a webhook endpoint needs instead of
// http.ServeMux, which may answer a path it cleans with a redirect: a 3xx
// tells a sender that the delivery failed, and an endpoint never answers
// one.
func ExactPaths(routes map[string]http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := routes[r.URL.Path]; ok {
			h.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})
}

// NewReceiver returns a receiver over p that authenticates with auth, with
// the default limits.
func NewReceiver(p lab.Processor, auth Authenticator) *Receiver {
	return &Receiver{Processor: p, Auth: auth}
}

// Answer is the JSON body of a 2xx.
type Answer struct {
	Outcome string `json:"outcome"` // "applied" or "duplicate"
	Source  string `json:"source"`
	EventID string `json:"event_id"`
}

// ServeHTTP handles one delivery; see Receiver.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		rc.problem(ctx, w, http.StatusMethodNotAllowed, "method-not-allowed", "only POST delivers an event", nil)
		return
	}
	if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" ||
		(params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) { // names are case-insensitive (RFC 9110 §8.3.2)
		rc.problem(ctx, w, http.StatusUnsupportedMediaType, "unsupported-media-type",
			fmt.Sprintf("content type %q, want application/json", r.Header.Get("Content-Type")), nil)
		return
	}
	if coding := contentCoding(r.Header); coding != "" {
		// Only a 415 for a content coding carries Accept-Encoding
		// (RFC 9110 §12.5.3); "identity" lists none.
		w.Header().Set("Accept-Encoding", "identity")
		rc.problem(ctx, w, http.StatusUnsupportedMediaType, "unsupported-media-type",
			fmt.Sprintf("content coding %q, want none (identity)", coding), nil)
		return
	}
	limit := rc.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	if r.ContentLength > limit {
		rc.problem(ctx, w, http.StatusRequestEntityTooLarge, "too-large",
			fmt.Sprintf("body of %d bytes, more than %d", r.ContentLength, limit), nil)
		return
	}
	bodyTimeout := rc.BodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = DefaultBodyTimeout
	}
	// net/http lifts the deadline once the body is read to its end, when
	// it starts reading the connection in the background to see the sender
	// leave; the processor's time is Deadline's. An error means the
	// ResponseWriter cannot set a deadline: the server's own timeouts are
	// all there is then.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		rc.problem(ctx, w, http.StatusRequestEntityTooLarge, "too-large", fmt.Sprintf("body longer than %d bytes", limit), nil)
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The rest of the body is still on its way: the connection
		// cannot carry another request (RFC 9110 §15.5.9).
		w.Header().Set("Connection", "close")
		rc.problem(ctx, w, http.StatusRequestTimeout, "request-timeout",
			fmt.Sprintf("the body was not in within %v", bodyTimeout), err)
		return
	case err != nil:
		rc.problem(ctx, w, http.StatusBadRequest, "unreadable", "the body could not be read", err)
		return
	}

	source, id, err := rc.Auth.Authenticate(r.Header, data)
	if err != nil {
		rc.problem(ctx, w, http.StatusUnauthorized, "unauthenticated", err.Error(), nil)
		return
	}
	body, err := DecodeBody(data)
	switch {
	case err != nil:
		rc.problem(ctx, w, http.StatusBadRequest, "malformed", err.Error(), nil)
		return
	case body.Source != "" && body.Source != source:
		rc.problem(ctx, w, http.StatusUnauthorized, "unauthenticated",
			fmt.Sprintf("the body names source %q, but the signature is %q's", body.Source, source), nil)
		return
	case body.EventID != "" && body.EventID != id:
		rc.problem(ctx, w, http.StatusBadRequest, "malformed",
			fmt.Sprintf("the body's event_id %q differs from %s %q", body.EventID, HeaderID, id), nil)
		return
	}

	e := lab.Event{Source: source, EventID: id, AccountID: body.AccountID, Amount: body.Amount}
	deadline := rc.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	pctx, cancel := context.WithTimeout(ctx, deadline)
	outcome, err := rc.Processor.Process(pctx, e)
	cancel()
	if err != nil {
		rc.failed(ctx, w, e, err)
		return
	}
	switch outcome {
	case lab.Applied:
	case lab.Duplicate:
		w.Header().Set(HeaderReplayed, "true")
	default:
		rc.problem(ctx, w, http.StatusInternalServerError, "outcome-unknown", "the handler gave no outcome",
			fmt.Errorf("Process(%v) = %v with no error", e, outcome))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(Answer{Outcome: outcome.String(), Source: e.Source, EventID: e.EventID})
}

// contentCoding returns the first content coding of h's Content-Encoding
// other than identity, or "" if there is none. Codings are
// case-insensitive (RFC 9110 §8.4.1), and empty list elements are ignored
// (§5.6.1).
func contentCoding(h http.Header) string {
	for _, line := range h.Values("Content-Encoding") {
		for _, coding := range strings.Split(line, ",") {
			if coding = strings.TrimSpace(coding); coding != "" && !strings.EqualFold(coding, "identity") {
				return coding
			}
		}
	}
	return ""
}

// failed answers a processor's error by its kind.
func (rc *Receiver) failed(ctx context.Context, w http.ResponseWriter, e lab.Event, err error) {
	switch {
	case errors.Is(err, lab.ErrInvalidEvent):
		rc.problem(ctx, w, http.StatusBadRequest, "invalid-event", err.Error(), nil)
	case errors.Is(err, lab.ErrPayloadConflict):
		rc.problem(ctx, w, http.StatusUnprocessableEntity, "payload-conflict", err.Error(), nil)
	case errors.Is(err, lab.ErrUnknownAccount):
		rc.problem(ctx, w, http.StatusUnprocessableEntity, "unknown-account",
			fmt.Sprintf("account %d does not exist here", e.AccountID), nil)
	case errors.Is(err, lab.ErrBusy):
		wait := rc.RetryAfter
		if wait <= 0 {
			wait = DefaultRetryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		rc.problem(ctx, w, http.StatusServiceUnavailable, "busy", "busy; nothing is known about the event yet: retry later", err)
	default:
		// The detail stays generic: the error may name tables and files.
		rc.problem(ctx, w, http.StatusInternalServerError, "outcome-unknown",
			"the event could not be confirmed; it may or may not be applied: retry", err)
	}
}

// ProblemType is the base of the problem types the receiver answers with
// (RFC 9457): a tag URI, which names a problem without pretending to be a
// page one could fetch.
const ProblemType = "tag:idemlab.invalid,2026:problem:"

// Problem is an RFC 9457 problem+json body.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// problem answers status with a problem+json body of the given type, and
// logs it with cause, the error behind it when there is one.
func (rc *Receiver) problem(ctx context.Context, w http.ResponseWriter, status int, kind, detail string, cause error) {
	log := rc.Log
	if log == nil {
		log = slog.Default()
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelWarn
	}
	attrs := []any{"status", status, "problem", kind}
	if cause != nil {
		attrs = append(attrs, "err", cause)
	}
	log.Log(ctx, level, "webhook refused", attrs...)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(Problem{Type: ProblemType + kind, Title: http.StatusText(status), Status: status, Detail: detail})
}
