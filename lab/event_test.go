package lab

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	if err := ok.Validate(); err != nil {
		t.Fatalf("Validate(%v) = %v, want nil", ok, err)
	}
	edge := ok
	edge.Amount = MaxAmount
	edge.EventID = strings.Repeat("é", MaxKeyBytes/2) // multi-byte, exactly at the limit
	if err := edge.Validate(); err != nil {
		t.Errorf("Validate(%v) = %v, want nil", edge, err)
	}

	for _, c := range []struct {
		name, want string
		edit       func(*Event)
	}{
		{"empty source", "source is empty", func(e *Event) { e.Source = "" }},
		{"empty event_id", "event_id is empty", func(e *Event) { e.EventID = "" }},
		{"long event_id", "event_id is 129 bytes", func(e *Event) { e.EventID = strings.Repeat("x", MaxKeyBytes+1) }},
		{"bad UTF-8", "source is not valid UTF-8", func(e *Event) { e.Source = "a\xffb" }},
		{"NUL", "event_id contains a NUL byte", func(e *Event) { e.EventID = "a\x00b" }},
		{"account 0", "account_id 0 is not positive", func(e *Event) { e.AccountID = 0 }},
		{"amount 0", "amount 0 is outside", func(e *Event) { e.Amount = 0 }},
		{"amount too big", "amount 1000000001 is outside", func(e *Event) { e.Amount = MaxAmount + 1 }},
	} {
		e := ok
		c.edit(&e)
		err := e.Validate()
		if !errors.Is(err, ErrInvalidEvent) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate(%q) = %v, want an invalid event error mentioning %q", c.name, e, err, c.want)
		}
	}
}

func TestErrorKind(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{ErrBusy, "busy"},
		{Classify(errors.New("boom")), "other error"},
		{Classify(ErrPayloadConflict), "payload conflict"},
	} {
		if got := ErrorKind(c.err); got != c.want {
			t.Errorf("ErrorKind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
