package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/naive/contenthash"
	"idemlab/naive/idonly"
	"idemlab/naive/insertorreplace"
	"idemlab/webhook"
)

// corpus reads the inputs of testdata/fuzz/<target>, whose files are in go
// test's format ("go test fuzz v1", then one Go literal a line), and
// returns each file's values as strings.
func corpus(t *testing.T, target string) [][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/fuzz/%s: %v files (%v), want the seed corpus", target, len(files), err)
	}
	var all [][]string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		var values []string
		for n := 0; sc.Scan(); n++ {
			line := sc.Text()
			if n == 0 {
				if line != "go test fuzz v1" {
					t.Fatalf("%s: first line %q, want go test fuzz v1", file, line)
				}
				continue
			}
			_, lit, ok := strings.Cut(line, "(")
			lit, ok2 := strings.CutSuffix(lit, ")")
			v, err := strconv.Unquote(lit)
			if !ok || !ok2 || err != nil {
				t.Fatalf("%s: line %q is not a quoted []byte or string (%v)", file, line, err)
			}
			values = append(values, v)
		}
		all = append(all, values)
	}
	return all
}

// A mistake is one way a hand-written body decoder goes wrong.
type mistake int

const (
	none          mistake = iota
	duplicates            // a name given twice: the last one wins
	trailing              // stops after the object, never looks at what follows
	caseFold              // "AMOUNT" is amount, as encoding/json matches names
	floats                // a number is a float64, truncated: 2.5 is 2, 1e3 is 1000
	quoted                // a number may come as a string: "500" is 500
	noUTF8Check           // leaves invalid UTF-8 to encoding/json, which replaces it
	keepSurrogate         // \ud800 is left to encoding/json, which replaces it
)

// decodeWith is DecodeBody written again with one mistake, or none: the
// test's own strict decoder, to show that checkDecode tells each mistake
// from the right thing.
func decodeWith(mk mistake) func([]byte) (webhook.Body, error) {
	return func(data []byte) (webhook.Body, error) {
		var b webhook.Body
		fail := func(why string) (webhook.Body, error) {
			return webhook.Body{}, fmt.Errorf("%w: %s", webhook.ErrMalformed, why)
		}
		if mk != noUTF8Check && !utf8.Valid(data) {
			return fail("not UTF-8")
		}
		if mk != keepSurrogate && loneSurrogate(data) {
			return fail("a lone surrogate")
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return fail("not an object")
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return fail(err.Error())
			}
			name := tok.(string)
			if mk == caseFold {
				name = strings.ToLower(name)
			}
			if seen[name] && mk != duplicates {
				return fail("twice")
			}
			seen[name] = true
			val, err := dec.Token()
			if err != nil {
				return fail(err.Error())
			}
			switch name {
			case "account_id", "amount":
				var n int64
				switch v := val.(type) {
				case json.Number:
					if mk == floats {
						f, err := v.Float64()
						if err != nil {
							return fail(err.Error())
						}
						n = int64(f)
					} else if n, err = strconv.ParseInt(string(v), 10, 64); err != nil {
						return fail(err.Error())
					}
				case string:
					if mk != quoted {
						return fail("a string")
					}
					if n, err = strconv.ParseInt(v, 10, 64); err != nil {
						return fail(err.Error())
					}
				default:
					return fail("not a number")
				}
				if name == "amount" {
					b.Amount = n
				} else {
					b.AccountID = n
				}
			case "event_id", "source":
				s, ok := val.(string)
				if !ok {
					return fail("not a string")
				}
				if name == "source" {
					b.Source = s
				} else {
					b.EventID = s
				}
			default:
				return fail("unknown")
			}
		}
		if _, err := dec.Token(); err != nil {
			return fail(err.Error())
		}
		if !seen["account_id"] || !seen["amount"] {
			return fail("missing")
		}
		if _, err := dec.Token(); err != io.EOF && mk != trailing {
			return fail("after")
		}
		return b, nil
	}
}

// loneSurrogate reports whether a \u escape in data names half of a
// surrogate pair without the other half, reading escapes the way
// strconv.Unquote does not need to be trusted for: in order, \\ first.
func loneSurrogate(data []byte) bool {
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' || i+1 >= len(data) {
			continue
		}
		i++
		if data[i] != 'u' || i+4 >= len(data) {
			continue
		}
		r, err := strconv.ParseUint(string(data[i+1:i+5]), 16, 16)
		if err != nil {
			continue
		}
		i += 4
		switch {
		case r >= 0xDC00 && r < 0xE000:
			return true
		case r >= 0xD800 && r < 0xDC00:
			if i+6 >= len(data) || data[i+1] != '\\' || data[i+2] != 'u' {
				return true
			}
			lo, err := strconv.ParseUint(string(data[i+3:i+7]), 16, 16)
			if err != nil || lo < 0xDC00 || lo >= 0xE000 {
				return true
			}
			i += 6
		}
	}
	return false
}

// TestFuzzDecodeCheckCatches holds checkDecode to the decoders it must
// reject: over the seeds and the corpus alone, it catches each of them,
// and it accepts DecodeBody and the test's own decoder without a mistake.
func TestFuzzDecodeCheckCatches(t *testing.T) {
	inputs := decodeSeeds
	for _, values := range corpus(t, "FuzzDecodeBody") {
		inputs = append(inputs, values[0])
	}
	plain := func(data []byte) (webhook.Body, error) {
		var s jsonBody
		if err := json.Unmarshal(data, &s); err != nil {
			return webhook.Body{}, fmt.Errorf("%w: %v", webhook.ErrMalformed, err)
		}
		return webhook.Body{EventID: s.EventID, Source: s.Source, AccountID: s.AccountID, Amount: s.Amount}, nil
	}
	wrongKind := func(data []byte) (webhook.Body, error) {
		b, err := webhook.DecodeBody(data)
		if err != nil {
			return b, errors.New(strings.TrimPrefix(err.Error(), "malformed body: "))
		}
		return b, nil
	}
	panics := func(data []byte) (webhook.Body, error) {
		if len(data) == 0 {
			var m map[string]int
			m["x"] = 1
		}
		return webhook.DecodeBody(data)
	}
	ordered := func(data []byte) (webhook.Body, error) {
		var b webhook.Body
		if _, err := fmt.Sscanf(string(data), `{"account_id":%d,"amount":%d}`, &b.AccountID, &b.Amount); err != nil ||
			!bytes.Equal(data, fmt.Appendf(nil, `{"account_id":%d,"amount":%d}`, b.AccountID, b.Amount)) {
			return webhook.Body{}, fmt.Errorf("%w: not in the expected form", webhook.ErrMalformed)
		}
		return b, nil
	}
	for _, d := range []struct {
		name   string
		decode func([]byte) (webhook.Body, error)
	}{
		{"json.Unmarshal into a struct", plain},
		{"duplicate names, the last one wins", decodeWith(duplicates)},
		{"data after the object", decodeWith(trailing)},
		{"names in any case", decodeWith(caseFold)},
		{"numbers as float64 (2.5, 1e3)", decodeWith(floats)},
		{`numbers in strings ("500")`, decodeWith(quoted)},
		{"invalid UTF-8 left to encoding/json", decodeWith(noUTF8Check)},
		{`\ud800 left to encoding/json`, decodeWith(keepSurrogate)},
		{"errors that are not ErrMalformed", wrongKind},
		{"a panic on an empty body", panics},
		{"a fixed layout, account_id first", ordered},
	} {
		var caught error
		for _, in := range inputs {
			if caught = checkDecode(d.decode, []byte(in)); caught != nil {
				break
			}
		}
		if caught == nil {
			t.Errorf("checkDecode over the seeds accepts a decoder with %s, want it caught", d.name)
		} else {
			t.Logf("%s: caught: %v", d.name, caught)
		}
	}
	for _, in := range inputs {
		for name, decode := range map[string]func([]byte) (webhook.Body, error){
			"DecodeBody": webhook.DecodeBody, "the test's decoder": decodeWith(none)} {
			if err := checkDecode(decode, []byte(in)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// kindless is a processor that loses its errors' kinds, as a handler that
// wraps them with %v instead of %w does.
type kindless struct{ p lab.Processor }

func (k kindless) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	o, err := k.p.Process(ctx, e)
	if err != nil {
		return o, errors.New(err.Error())
	}
	return o, nil
}

// TestFuzzReceiverCheckCatches holds receiverCheck to the receivers it must
// reject: over the seeds and the corpus alone it catches each, and it
// passes correct.
func TestFuzzReceiverCheckCatches(t *testing.T) {
	inputs := receiverSeeds
	for _, values := range corpus(t, "FuzzReceiver") {
		inputs = append(inputs, receiverSeed{values[0], values[1]})
	}
	run := func(c *receiverCheck) error {
		for _, in := range inputs {
			if err := c.deliver(in.id, []byte(in.body)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, w := range []struct {
		name    string
		variant lab.Variant
		wrap    func(lab.Processor) lab.Processor
	}{
		{idonly.Variant.Name, idonly.Variant, nil},
		{insertorreplace.Variant.Name, insertorreplace.Variant, nil},
		{contenthash.Variant.Name, contenthash.Variant, nil},
		{"correct, its errors without kinds", correct.Variant, func(p lab.Processor) lab.Processor { return kindless{p} }},
	} {
		if err := run(newReceiverCheck(t, w.variant, w.wrap)); err == nil {
			t.Errorf("receiverCheck over the seeds accepts a receiver over %s, want it caught", w.name)
		} else {
			t.Logf("%s: caught: %v", w.name, err)
		}
	}
	if err := run(newReceiverCheck(t, correct.Variant, nil)); err != nil {
		t.Errorf("correct: %v", err)
	}
}
