package lab

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits that keep every event small and every balance far from overflow.
//
// MaxAmount times the number of events an account could plausibly receive
// stays below MaxBalance, and MaxBalance stays far below the largest int64, so
// SQLite never has to turn an overflowing sum into a REAL. The schema repeats
// both caps as CHECK constraints: validation gives the clear error early, the
// constraint is the net under it.
const (
	MaxKeyBytes = 128           // longest source or event_id, in bytes
	MaxAmount   = 1_000_000_000 // largest single credit, in whole units
	MaxBalance  = 1_000_000_000_000_000
)

// Event is one delivery of a webhook: a credit of Amount to AccountID,
// identified by the pair (Source, EventID). The source is already
// authenticated: over HTTP, webhook.Receiver takes it from the integration
// whose secret verified the request's signature, never from the payload.
type Event struct {
	Source    string // who sent it, e.g. "provider-a"
	EventID   string // the sender's id for it, unique within Source
	AccountID int64  // the account to credit
	Amount    int64  // positive whole units
}

// Key is the pair that identifies an event: the same EventID from two sources
// names two different events.
type Key struct {
	Source  string
	EventID string
}

// Key returns the identity of e.
func (e Event) Key() Key { return Key{e.Source, e.EventID} }

// String renders e the way transcripts show it.
func (e Event) String() string {
	return fmt.Sprintf("%s/%s account=%d amount=%d", e.Source, e.EventID, e.AccountID, e.Amount)
}

// String renders k as source/event_id, for people to read. It is no
// identifier: acme/eu's event x and acme's event eu/x render alike.
func (k Key) String() string { return k.Source + "/" + k.EventID }

// Validate reports whether e can be processed at all. It is called before any
// SQL runs, so a rejected event writes nothing. The error wraps
// ErrInvalidEvent and names the field and the rule.
func (e Event) Validate() error {
	var problems []string
	if p := keyProblem(e.Source); p != "" {
		problems = append(problems, "source "+p)
	}
	if p := keyProblem(e.EventID); p != "" {
		problems = append(problems, "event_id "+p)
	}
	if e.AccountID <= 0 {
		problems = append(problems, fmt.Sprintf("account_id %d is not positive", e.AccountID))
	}
	if e.Amount <= 0 || e.Amount > MaxAmount {
		problems = append(problems, fmt.Sprintf("amount %d is outside 1..%d", e.Amount, MaxAmount))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidEvent, strings.Join(problems, "; "))
	}
	return nil
}

// keyProblem describes what is wrong with a source or event_id, or returns "".
func keyProblem(s string) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > MaxKeyBytes:
		return fmt.Sprintf("is %d bytes, more than %d", len(s), MaxKeyBytes)
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL byte"
	}
	return ""
}
