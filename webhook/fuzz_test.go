package webhook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"idemlab/webhook"
)

// decodeSeeds are the bodies every run of FuzzDecodeBody tries first, with
// the files of testdata/fuzz/FuzzDecodeBody, which hold the hostile ones.
var decodeSeeds = []string{
	okBody,
	`{"event_id":"evt-1","source":"provider-a","account_id":1,"amount":500}`,
	`{"account_id":1,"amount":500}`,
}

// bodyNames are the JSON names of a Body, each of them exactly as a
// sender must spell it; account_id and amount are required.
var bodyNames = map[string]bool{"event_id": false, "source": false, "account_id": true, "amount": true}

// jsonBody is a Body as encoding/json reads it, by the struct tags.
type jsonBody struct {
	EventID   string `json:"event_id"`
	Source    string `json:"source"`
	AccountID int64  `json:"account_id"`
	Amount    int64  `json:"amount"`
}

// checkDecode holds decode's answer for data to what must be true of a
// strict decoder of Body whatever the bytes, and returns what broke. None
// of it says how to decode: it compares decode with encoding/json's
// readings of the same bytes and with decode's own reading of its result.
//
//   - it does not panic, and every error wraps webhook.ErrMalformed;
//   - an accepted body is valid UTF-8 and one valid JSON value with nothing
//     after it (json.Valid);
//   - read into a map, it has only the four names, spelled exactly, and
//     account_id and amount; the numbers are numbers and the strings
//     strings, not null (a map has no case folding: "AMOUNT" is its own
//     key);
//   - read into a struct, its int64 fields take the numbers (so neither
//     2.5, nor 1e3, nor "500", nor 2^63) and every field equals decode's;
//   - listed member by member, no name comes twice (the map keeps one);
//   - a string holds U+FFFD only where the body spells it: nothing was
//     replaced on the way (encoding/json turns a lone surrogate, \ud800,
//     into U+FFFD);
//   - the Body, written again with its members in another order and other
//     spacing, decodes to the same Body.
func checkDecode(decode func([]byte) (webhook.Body, error), data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("DecodeBody(%q) panics: %v", data, r)
		}
	}()
	b, derr := decode(data)
	if derr != nil {
		if !errors.Is(derr, webhook.ErrMalformed) {
			return fmt.Errorf("DecodeBody(%q) = %v, want an error that wraps ErrMalformed", data, derr)
		}
		return nil
	}
	accepted := func(format string, args ...any) error {
		return fmt.Errorf("DecodeBody(%q) = %+v, want an error: %s", data, b, fmt.Sprintf(format, args...))
	}
	if !utf8.Valid(data) {
		return accepted("not valid UTF-8")
	}
	if !json.Valid(data) {
		return accepted("encoding/json finds no single JSON value (data after it?)")
	}

	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return accepted("encoding/json reads no object into a map (%v)", err)
	}
	for name, v := range m {
		required, known := bodyNames[name]
		switch {
		case !known:
			return accepted("encoding/json reads a member %q", name)
		case required:
			if _, ok := v.(json.Number); !ok {
				return accepted("encoding/json reads %s as %T, want a number", name, v)
			}
		default:
			if _, ok := v.(string); !ok {
				return accepted("encoding/json reads %s as %T, want a string", name, v)
			}
		}
	}
	for name, required := range bodyNames {
		if _, ok := m[name]; required && !ok {
			return accepted("encoding/json reads no %s", name)
		}
	}

	var s jsonBody
	if err := json.Unmarshal(data, &s); err != nil {
		return accepted("encoding/json cannot read it into int64 and string fields: %v", err)
	}
	if got := (webhook.Body{EventID: s.EventID, Source: s.Source, AccountID: s.AccountID, Amount: s.Amount}); got != b {
		return fmt.Errorf("DecodeBody(%q) = %+v, want %+v as encoding/json reads it", data, b, got)
	}

	names, err := memberNames(data)
	if err != nil {
		return accepted("its members cannot be listed: %v", err)
	}
	if len(names) != len(m) {
		return accepted("members %q: a name given twice", names)
	}

	spelled := bytes.Count(data, []byte("\uFFFD")) + strings.Count(strings.ToLower(string(data)), `\ufffd`)
	if got := strings.Count(b.EventID+b.Source, "\uFFFD"); got > spelled {
		return accepted("its strings hold %d U+FFFD, the body spells %d: something was replaced", got, spelled)
	}

	again := reencode(b)
	if b2, err := decode(again); err != nil || b2 != b {
		return fmt.Errorf("DecodeBody(%q) = %+v, but DecodeBody(%q) of it again = %+v, %v, want the same", data, b, again, b2, err)
	}
	return nil
}

// reencode writes b as a sender might, members from last to first, with
// spaces, the optional ones only when they are not empty.
func reencode(b webhook.Body) []byte {
	q := func(s string) string { v, _ := json.Marshal(s); return string(v) }
	out := fmt.Sprintf(`{ "amount" : %d, "account_id" : %d`, b.Amount, b.AccountID)
	if b.Source != "" {
		out += `, "source" : ` + q(b.Source)
	}
	if b.EventID != "" {
		out += `, "event_id" : ` + q(b.EventID)
	}
	return []byte(out + " }\n")
}

// memberNames lists the names of a JSON object's members in order, as
// many times as they occur, whatever their values.
func memberNames(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object (%v)", err)
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		names = append(names, tok.(string))
	}
	return names, nil
}

// FuzzDecodeBody feeds DecodeBody arbitrary bytes and holds it to
// checkDecode. go test runs the seeds and testdata/fuzz/FuzzDecodeBody;
// go test ./webhook -run '^$' -fuzz '^FuzzDecodeBody$' searches further,
// and what it finds is written there and replayed by go test from then on.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := checkDecode(webhook.DecodeBody, data); err != nil {
			t.Fatal(err)
		}
	})
}
