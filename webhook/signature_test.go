package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/lab"
	"idemlab/webhook"
)

// authCheck is one request an endpoint for provider-a (secrets A and A2)
// must accept or refuse.
type authCheck struct {
	name   string
	accept bool
	req    func() *http.Request
}

// resign replaces the signature header of a request.
func resign(r *http.Request, sig string) *http.Request {
	r.Header.Set(webhook.HeaderSignature, sig)
	return r
}

// signedAt is signed(), at another time than now.
func signedAt(at time.Time, id, body string, secrets ...webhook.Secret) *http.Request {
	r := signed(id, body, secrets...)
	webhook.SignRequest(r.Header, id, at, []byte(body), secrets...)
	return r
}

func sigOf(s webhook.Secret, id string, body string) string {
	return s.Sign(id, time.Now().Unix(), []byte(body))
}

var authChecks = []authCheck{
	{"signed with the current secret", true, func() *http.Request { return signed("evt-1", okBody, secretA) }},
	{"signed with the next secret during a rotation", true, func() *http.Request { return signed("evt-1", okBody, secretA2) }},
	{"an unknown signature, then a valid one", true, func() *http.Request {
		return resign(signed("evt-1", okBody), sigOf(secretB, "evt-1", okBody)+" "+sigOf(secretA, "evt-1", okBody))
	}},
	{"a valid signature, then an unknown one", true, func() *http.Request {
		return resign(signed("evt-1", okBody), sigOf(secretA, "evt-1", okBody)+" "+sigOf(secretB, "evt-1", okBody))
	}},
	{"an asymmetric v1a signature beside a valid v1", true, func() *http.Request {
		return resign(signed("evt-1", okBody), "v1a,bm90IGNoZWNrZWQ= "+sigOf(secretA, "evt-1", okBody))
	}},
	{"timestamp 4m59s old", true, func() *http.Request { return signedAt(time.Now().Add(-299*time.Second), "evt-1", okBody, secretA) }},
	{"timestamp 4m59s ahead", true, func() *http.Request { return signedAt(time.Now().Add(299*time.Second), "evt-1", okBody, secretA) }},

	{"unsigned", false, func() *http.Request {
		r := signed("evt-1", okBody)
		r.Header = http.Header{"Content-Type": {"application/json"}}
		return r
	}},
	{"no signature header", false, func() *http.Request {
		r := signed("evt-1", okBody, secretA)
		r.Header.Del(webhook.HeaderSignature)
		return r
	}},
	{"no timestamp header", false, func() *http.Request {
		r := signed("evt-1", okBody, secretA)
		r.Header.Del(webhook.HeaderTimestamp)
		return r
	}},
	{"signed by provider-b (cross-source)", false, func() *http.Request { return signed("evt-1", okBody, secretB) }},
	{"the body changed after signing", false, func() *http.Request {
		return resign(signed("evt-1", `{"account_id":1,"amount":900}`), sigOf(secretA, "evt-1", okBody))
	}},
	{"the id changed after signing", false, func() *http.Request {
		return resign(signed("evt-2", okBody), sigOf(secretA, "evt-1", okBody))
	}},
	{"the timestamp changed after signing", false, func() *http.Request {
		r := signed("evt-1", okBody, secretA)
		r.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(time.Now().Unix()+1, 10))
		return r
	}},
	{"stale: 5m01s old", false, func() *http.Request { return signedAt(time.Now().Add(-301*time.Second), "evt-1", okBody, secretA) }},
	{"from the future: 5m01s ahead", false, func() *http.Request { return signedAt(time.Now().Add(301*time.Second), "evt-1", okBody, secretA) }},
	{"signed a day ago", false, func() *http.Request { return signedAt(time.Now().Add(-24*time.Hour), "evt-1", okBody, secretA) }},
	{"several signatures, none valid", false, func() *http.Request {
		return resign(signed("evt-1", okBody), "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 32))+" "+
			sigOf(secretB, "evt-1", okBody)+" v1,!!!! v1,")
	}},
	{"an empty v1 signature", false, func() *http.Request { return resign(signed("evt-1", okBody), "v1,") }},
	{"a truncated valid signature", false, func() *http.Request {
		s := sigOf(secretA, "evt-1", okBody)
		return resign(signed("evt-1", okBody), s[:len(s)-8])
	}},
	{"a valid signature with its case flipped", false, func() *http.Request {
		s := sigOf(secretA, "evt-1", okBody)
		return resign(signed("evt-1", okBody), "v1,"+flipCase(s[3:]))
	}},
	{"a valid MAC labelled v2", false, func() *http.Request {
		return resign(signed("evt-1", okBody), "v2,"+sigOf(secretA, "evt-1", okBody)[3:])
	}},
	{"a signed body naming provider-b as its source", false, func() *http.Request {
		return signed("evt-1", `{"source":"provider-b","account_id":1,"amount":500}`, secretA)
	}},
	{"a timestamp with a sign", false, func() *http.Request {
		r := signed("evt-1", okBody, secretA)
		r.Header.Set(webhook.HeaderTimestamp, "+"+r.Header.Get(webhook.HeaderTimestamp))
		return r
	}},
	{"an id holding a dot", false, func() *http.Request { return signed("evt.1", okBody, secretA) }},
}

func flipCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// authProblems runs every check against a receiver whose authenticator is
// auth and returns what went wrong. A refused request must get 401 and
// never reach the processor; an accepted one reaches it as provider-a's.
func authProblems(auth webhook.Authenticator) []string {
	var problems []string
	for _, c := range authChecks {
		p := &stub{outcome: lab.Applied}
		resp := serve(p, auth, c.req())
		calls := p.called()
		switch {
		case c.accept && (resp.StatusCode != 200 || len(calls) != 1 || calls[0].Source != "provider-a"):
			problems = append(problems, fmt.Sprintf("%s: status %d, Process calls %v, want 200 for provider-a", c.name, resp.StatusCode, calls))
		case !c.accept && (resp.StatusCode != 401 || len(calls) != 0):
			problems = append(problems, fmt.Sprintf("%s: status %d, Process calls %v, want 401 and none", c.name, resp.StatusCode, calls))
		}
	}
	return problems
}

// TestAuthentication runs every check against the Verifier.
func TestAuthentication(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, p := range authProblems(endpointA()) {
			t.Error(p)
		}
	})
}

// wrongVerifier is a verifier with one classic mistake; authProblems must
// catch every one.
type wrongVerifier struct {
	name string
	// secrets: every secret it trusts, of every integration.
	all bool
	// timestamp: which side of the tolerance it checks.
	checkOld, checkNew bool
	// compare decides whether a given signature matches the expected MAC.
	compare func(given string, want []byte) bool
	// lastDecides: every signature overwrites the verdict of the one before.
	lastDecides bool
	// sourceFromBody: the body's "source" field, when there is one, names
	// the sender.
	sourceFromBody bool
}

func (v wrongVerifier) Authenticate(h http.Header, body []byte) (string, string, error) {
	no := fmt.Errorf("%w: %s says no", webhook.ErrUnauthenticated, v.name)
	id, ts, sigs := h.Get(webhook.HeaderID), h.Get(webhook.HeaderTimestamp), h.Get(webhook.HeaderSignature)
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sigs == "" {
		return "", "", no
	}
	if skew := time.Since(time.Unix(t, 0)); (v.checkOld && skew > webhook.DefaultTolerance) || (v.checkNew && skew < -webhook.DefaultTolerance) {
		return "", "", no
	}
	secrets := []webhook.Secret{secretA, secretA2}
	if v.all {
		secrets = append(secrets, secretB)
	}
	ok := false
	for _, s := range strings.Fields(sigs) {
		scheme, given, _ := strings.Cut(s, ",")
		if scheme != "v1" {
			continue
		}
		match := false
		for _, secret := range secrets {
			h := hmac.New(sha256.New, secret)
			fmt.Fprintf(h, "%s.%d.%s", id, t, body)
			match = match || v.compare(given, h.Sum(nil))
		}
		if v.lastDecides {
			ok = match
		} else {
			ok = ok || match
		}
	}
	if !ok {
		return "", "", no
	}
	source := "provider-a"
	var claim struct{ Source string }
	if v.sourceFromBody && json.Unmarshal(body, &claim) == nil && claim.Source != "" {
		source = claim.Source
	}
	return source, id, nil
}

func exact(given string, want []byte) bool {
	mac, err := base64.StdEncoding.DecodeString(given)
	return err == nil && hmac.Equal(mac, want)
}

var wrongVerifiers = []wrongVerifier{
	{name: "ignores the timestamp", all: false, compare: exact},
	{name: "refuses old timestamps only", checkOld: true, compare: exact},
	{name: "trusts every integration's secret on every endpoint", all: true, checkOld: true, checkNew: true, compare: exact},
	{name: "takes the source from the body", checkOld: true, checkNew: true, compare: exact, sourceFromBody: true},
	{name: "lets the last signature decide", checkOld: true, checkNew: true, compare: exact, lastDecides: true},
	{name: "compares base64 text ignoring case", checkOld: true, checkNew: true, compare: func(given string, want []byte) bool {
		return strings.EqualFold(given, base64.StdEncoding.EncodeToString(want))
	}},
	{name: "compares a prefix", checkOld: true, checkNew: true, compare: func(given string, want []byte) bool {
		return strings.HasPrefix(base64.StdEncoding.EncodeToString(want), given)
	}},
	{name: "accepts a signature that decodes", checkOld: true, checkNew: true, compare: func(given string, want []byte) bool {
		mac, err := base64.StdEncoding.DecodeString(given)
		return err == nil && len(mac) == len(want)
	}},
}

// TestWrongVerifiersCaught holds the checks to their purpose: each classic
// verification mistake fails at least one of them. (A comparison that is
// not constant-time cannot be caught this way; the Verifier uses
// hmac.Equal, and that is checked by reading it.)
func TestWrongVerifiersCaught(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, v := range wrongVerifiers {
			problems := authProblems(v)
			if len(problems) == 0 {
				t.Errorf("authProblems(%s) = none, want the mistake caught", v.name)
				continue
			}
			t.Logf("%s: caught by %d checks, first: %s", v.name, len(problems), problems[0])
		}
	})
}

// TestSecrets checks the whsec_ form and its limits.
func TestSecrets(t *testing.T) {
	s, err := webhook.ParseSecret(secretA.String())
	if err != nil || string(s) != string(secretA) {
		t.Errorf("ParseSecret(%q) = %q, %v, want the secret back", secretA.String(), s, err)
	}
	for _, bad := range []string{"", "secret", "whsec_", "whsec_***", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 23)),
		"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 65)), base64.StdEncoding.EncodeToString(secretA)} {
		if _, err := webhook.ParseSecret(bad); err == nil {
			t.Errorf("ParseSecret(%q) = nil error, want one", bad)
		}
	}
}

// TestKnownSignature pins the scheme to an independent computation: the
// HMAC-SHA256 of "msg_1.1674087231.{}" under a known key.
func TestKnownSignature(t *testing.T) {
	key := webhook.Secret("0123456789abcdef01234567")
	h := hmac.New(sha256.New, key)
	h.Write([]byte("msg_1.1674087231.{}"))
	want := "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
	if got := key.Sign("msg_1", 1674087231, []byte("{}")); got != want {
		t.Errorf("Sign(msg_1, 1674087231, {}) = %s, want %s", got, want)
	}
}
