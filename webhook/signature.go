package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers. webhook-id is the event's id, the same on
// every retry; webhook-timestamp is the attempt's time in Unix seconds, new
// on every retry; webhook-signature is a space-separated list of
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>", one per secret the sender
// signs with (two while a secret is being rotated).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// DefaultTolerance is how far a request's timestamp may be from the
// receiver's clock, either way: the libraries of Standard Webhooks use five
// minutes. It bounds how long a captured request can be replayed; within
// it, a replay is just a repeat, and the inbox answers it as a duplicate.
const DefaultTolerance = 5 * time.Minute

// A Secret is a shared signing key. Standard Webhooks serialises it as
// "whsec_" followed by its base64 encoding, and asks for 24 to 64 random
// bytes.
type Secret []byte

// ParseSecret decodes a "whsec_…" secret.
func ParseSecret(s string) (Secret, error) {
	b64, ok := strings.CutPrefix(s, "whsec_")
	if !ok {
		return nil, fmt.Errorf("webhook secret %.10q…: no whsec_ prefix", s)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, fmt.Errorf("webhook secret: %d bytes, want 24 to 64", len(key))
	}
	return key, nil
}

// String returns the secret in its whsec_ form.
func (s Secret) String() string { return "whsec_" + base64.StdEncoding.EncodeToString(s) }

// Sign returns the signature of one attempt, "v1,<base64>", over
// id.timestamp.body.
func (s Secret) Sign(id string, timestamp int64, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(s.mac(id, timestamp, body))
}

func (s Secret) mac(id string, timestamp int64, body []byte) []byte {
	h := hmac.New(sha256.New, s)
	fmt.Fprintf(h, "%s.%d.", id, timestamp)
	h.Write(body)
	return h.Sum(nil)
}

// An Integration is one sender the receiver trusts: the name under which
// its events are keyed (lab.Event.Source) and the secrets it signs with.
// More than one secret is a rotation in progress: each one verifies.
type Integration struct {
	Source  string
	Secrets []Secret
}

// ErrUnauthenticated is the kind of every error Authenticate returns:
// answer 401 and write nothing.
var ErrUnauthenticated = errors.New("unauthenticated")

// An Authenticator decides who sent a request, from its headers and its raw
// body, before anything else reads either. It returns the source the
// request proves it comes from and the event id it signs, or an error
// wrapping ErrUnauthenticated.
type Authenticator interface {
	Authenticate(h http.Header, body []byte) (source, id string, err error)
}

// Verifier authenticates requests signed as Standard Webhooks specifies,
// with HMAC-SHA256 and shared secrets. Give it one integration per
// endpoint, so that a request signed by another integration's secret is
// refused there (cross-source), or several for one endpoint shared by many
// senders: either way the source is the integration whose secret verified
// the signature, never a name the request gives.
type Verifier struct {
	Integrations []Integration
	// Tolerance bounds the distance between the request's timestamp and
	// the clock, both ways; 0 means DefaultTolerance.
	Tolerance time.Duration
}

var _ Authenticator = (*Verifier)(nil)

// Authenticate checks the three headers against body. It computes one MAC
// per secret and compares it with every v1 signature of the header in
// constant time (hmac.Equal), so the time it takes does not tell a forger
// how much of a guess was right. Signatures of other schemes (v1a, the
// asymmetric one) are skipped; a header with none that verifies is
// refused.
func (v *Verifier) Authenticate(h http.Header, body []byte) (source, id string, err error) {
	id = h.Get(HeaderID)
	ts, sigs := h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if ts == "" || sigs == "" {
		return "", "", fmt.Errorf("%w: no %s or %s header: the request is not signed", ErrUnauthenticated, HeaderTimestamp, HeaderSignature)
	}
	// The signed content is id.timestamp.body: an id holding a '.' would
	// let one signature be read with another split of id and timestamp.
	if strings.Contains(id, ".") {
		return "", "", fmt.Errorf("%w: %s %q contains '.'", ErrUnauthenticated, HeaderID, id)
	}
	t, err := parseTimestamp(ts)
	if err != nil {
		return "", "", err
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if skew := time.Since(time.Unix(t, 0)); skew > tolerance || skew < -tolerance {
		return "", "", fmt.Errorf("%w: %s %d is %v from now, more than %v: stale or replayed", ErrUnauthenticated, HeaderTimestamp, t, skew.Round(time.Second), tolerance)
	}
	var given [][]byte
	for _, s := range strings.Fields(sigs) {
		scheme, b64, ok := strings.Cut(s, ",")
		if !ok || scheme != "v1" {
			continue
		}
		if mac, err := base64.StdEncoding.DecodeString(b64); err == nil && len(mac) == sha256.Size {
			given = append(given, mac)
		}
	}
	for _, in := range v.Integrations {
		for _, secret := range in.Secrets {
			want := secret.mac(id, t, body)
			for _, mac := range given {
				if hmac.Equal(mac, want) {
					return in.Source, id, nil
				}
			}
		}
	}
	return "", "", fmt.Errorf("%w: no signature in %s verifies with a secret of this endpoint", ErrUnauthenticated, HeaderSignature)
}

// parseTimestamp reads Unix seconds: digits only, no sign, no fraction.
func parseTimestamp(s string) (int64, error) {
	bad := s == "" || len(s) > 12 || strings.TrimLeft(s, "0123456789") != ""
	t, err := strconv.ParseInt(s, 10, 64)
	if bad || err != nil {
		return 0, fmt.Errorf("%w: %s %q is not Unix seconds", ErrUnauthenticated, HeaderTimestamp, s)
	}
	return t, nil
}

// SignRequest sets the three headers on h for one attempt at time now,
// with one signature per secret.
func SignRequest(h http.Header, id string, now time.Time, body []byte, secrets ...Secret) {
	t := now.Unix()
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		sigs[i] = s.Sign(id, t, body)
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(t, 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
}
