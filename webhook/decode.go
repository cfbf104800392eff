package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Body is what a delivery's JSON says:
//
//	{"account_id": 1, "amount": 500}
//
// with two optional fields, "event_id" and "source". Neither is ever taken
// as the event's key: the id is the signed webhook-id header, and the
// source is the integration whose secret verified the signature. A body
// may repeat them (many senders put the id in the payload), and then they
// must agree with what the signature proved: an event_id that differs is
// a malformed request (400), a source that differs is a sender claiming to
// be another (401).
type Body struct {
	EventID   string // "" when absent
	Source    string // "" when absent
	AccountID int64
	Amount    int64
}

// ErrMalformed is the kind of every error DecodeBody returns: answer 400.
// It is exported so that a caller (and FuzzDecodeBody) can tell a refused
// body from any other failure with errors.Is.
var ErrMalformed = errors.New("malformed body")

// DecodeBody reads one JSON object, strictly. encoding/json alone would
// accept what a webhook receiver should refuse: field names in any case
// ("AMOUNT"), a field given twice (the last one wins, and two parsers may
// disagree about which), null for a number, and data after the object;
// and it would replace invalid UTF-8 silently. So the object is read token
// by token: valid UTF-8, exactly the known names, each at most once,
// account_id and amount whole numbers that fit in an int64 (not 2.5, not
// 1e3, not "500"), event_id and source strings, nothing after the closing
// brace. Range checks (positive, below the caps) are lab.Event.Validate's.
//
// Valid UTF-8 includes the escapes: encoding/json turns half a surrogate
// pair, "\ud800", into U+FFFD as silently as it does a stray byte, so an
// escape of a surrogate without its other half is refused too: RFC 8259
// §8.2 allows one in a string ("\uDEAD") and calls what software does with
// it unpredictable. FuzzDecodeBody found it: an event_id "\ud800" was read
// as "\ufffd", equal to a webhook-id that is U+FFFD.
func DecodeBody(data []byte) (Body, error) {
	var b Body
	fail := func(format string, args ...any) (Body, error) {
		return Body{}, fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	if !utf8.Valid(data) {
		return fail("not valid UTF-8")
	}
	if at := loneSurrogate(data); at >= 0 {
		return fail("%s at byte %d is half of a surrogate pair", data[at:at+6], at)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail("want a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail("%v", err)
		}
		name := tok.(string) // inside an object, a name is always a string
		if seen[name] {
			return fail("field %q given twice", name)
		}
		seen[name] = true
		val, err := dec.Token()
		if err != nil {
			return fail("%v", err)
		}
		switch name {
		case "account_id", "amount":
			num, ok := val.(json.Number)
			if !ok {
				return fail("%s is %s, want a whole number", name, describe(val))
			}
			n, err := strconv.ParseInt(string(num), 10, 64)
			if err != nil {
				return fail("%s %s is not a whole number in the range of int64", name, num)
			}
			if name == "amount" {
				b.Amount = n
			} else {
				b.AccountID = n
			}
		case "event_id", "source":
			s, ok := val.(string)
			if !ok {
				return fail("%s is %s, want a string", name, describe(val))
			}
			if name == "source" {
				b.Source = s
			} else {
				b.EventID = s
			}
		default:
			return fail("unknown field %q", name)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return fail("%v", err)
	}
	for _, name := range []string{"account_id", "amount"} {
		if !seen[name] {
			return fail("no %s", name)
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("data after the object")
	}
	return b, nil
}

// describe names the JSON type of a token that is not the one wanted.
func describe(tok any) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "a number"
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "an object"
	}
	return fmt.Sprintf("%T", tok)
}

// loneSurrogate returns the offset of the first \u escape in data that
// names half of a UTF-16 surrogate pair without the other half right after
// it, or -1. It reads escapes in order, so "\\ud800" (a backslash, then
// the letters) is none; a backslash outside a string is the tokenizer's to
// refuse.
func loneSurrogate(data []byte) int {
	hex4 := func(i int) (rune, bool) { // the escape \uXXXX starting at data[i]
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		switch {
		case !ok:
			i++ // another escape: skip the character it escapes
		case utf16.IsSurrogate(r) && r >= 0xDC00: // a low half first
			return i
		case utf16.IsSurrogate(r):
			if lo, ok := hex4(i + 6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return i
			}
			i += 11
		default:
			i += 5
		}
	}
	return -1
}
