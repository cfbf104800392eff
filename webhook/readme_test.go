package webhook_test

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"idemlab/lab"
	"idemlab/webhook"
)

// readmeRequests are the status table's rows that are not a processor's
// answer: a request that is refused before the processor runs.
var readmeRequests = map[string]func() *http.Request{
	"no key": func() *http.Request {
		r := signed("", okBody, secretA)
		r.Header.Del(webhook.HeaderID)
		return r
	},
	"wrong method": func() *http.Request { r := signed("evt-1", okBody, secretA); r.Method = "PUT"; return r },
	"wrong content type": func() *http.Request {
		r := signed("evt-1", okBody, secretA)
		r.Header.Set("Content-Type", "text/plain")
		return r
	},
	"body too large": func() *http.Request {
		return signed("evt-1", `{"pad":"`+strings.Repeat("x", webhook.DefaultMaxBody)+`"}`, secretA)
	},
	"content coding": func() *http.Request {
		r := signed("evt-1", okBody, secretA)
		r.Header.Set("Content-Encoding", "gzip")
		return r
	},
	"bad signature":  func() *http.Request { return signed("evt-1", okBody, secretB) },
	"malformed body": func() *http.Request { return signed("evt-1", `{"account_id":1}`, secretA) },
}

var (
	rowStatus     = regexp.MustCompile(`^(\d{3})\b`)
	rowProblem    = regexp.MustCompile("`([a-z-]+)`")
	rowRetryAfter = regexp.MustCompile("`Retry-After: (\\d+)`")
)

// statusTablePath is the page that holds the status table: the README
// sends its readers there.
const statusTablePath = "../docs/http.md"

// TestReadmeStatusTable holds the status table of docs/http.md to the
// receiver: every row's status, problem type, Retry-After and replay mark
// is what the receiver answers, and every outcome the receiver tells apart
// has its row.
func TestReadmeStatusTable(t *testing.T) {
	data, err := os.ReadFile(statusTablePath)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "<!-- status: checked by go test ./webhook")
	table, _, ok2 := strings.Cut(table, "<!-- end of status -->")
	if !ok || !ok2 {
		t.Fatalf("%s has no status table between its markers", statusTablePath)
	}
	seen := map[string]bool{}
	synctest.Test(t, func(t *testing.T) {
		for _, line := range strings.Split(table, "\n") {
			cells := strings.Split(line, "|")
			if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "outcome" {
				continue
			}
			name, cell := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
			seen[name] = true
			var resp *http.Response
			if build, ok := readmeRequests[name]; ok {
				resp = serve(&stub{outcome: lab.Applied}, endpointA(), build())
			} else {
				found := false
				for _, c := range statusCases {
					if c.name == name {
						resp = serve(&stub{outcome: c.outcome, err: c.err}, endpointA(), signed("evt-1", okBody, secretA))
						found = true
					}
				}
				if !found {
					t.Errorf("status table row %q: no such case in the test; add it to statusCases or readmeRequests", name)
					continue
				}
			}
			m := rowStatus.FindStringSubmatch(cell)
			if m == nil {
				t.Errorf("status table row %q: status cell %q does not start with a status", name, cell)
				continue
			}
			if want, _ := strconv.Atoi(m[1]); resp.StatusCode != want {
				t.Errorf("status table row %q: the receiver answers %d, the table says %d", name, resp.StatusCode, want)
			}
			if m := rowProblem.FindStringSubmatch(cell); m != nil {
				if got := problemType(t, resp); got != m[1] {
					t.Errorf("status table row %q: problem type = %q, the table says %q", name, got, m[1])
				}
			}
			if m := rowRetryAfter.FindStringSubmatch(cell); m != nil || resp.Header.Get("Retry-After") != "" {
				if m == nil || resp.Header.Get("Retry-After") != m[1] {
					t.Errorf("status table row %q: Retry-After = %q, the table says %q", name, resp.Header.Get("Retry-After"), cell)
				}
			}
			if want := strings.Contains(cell, webhook.HeaderReplayed+": true"); (resp.Header.Get(webhook.HeaderReplayed) == "true") != want {
				t.Errorf("status table row %q: %s = %q, the table says %q", name, webhook.HeaderReplayed, resp.Header.Get(webhook.HeaderReplayed), cell)
			}
		}
	})
	for _, c := range statusCases {
		if !seen[c.name] && c.name != "no outcome" { // a handler's bug, not an outcome
			t.Errorf("%s's status table has no row %q", statusTablePath, c.name)
		}
	}
	for name := range readmeRequests {
		if !seen[name] {
			t.Errorf("%s's status table has no row %q", statusTablePath, name)
		}
	}
}
