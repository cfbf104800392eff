package checks

import (
	"fmt"

	"pgregory.net/rapid"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// SourceScope is the check of the sourcescope exercise: the whole matrix
// held to the correct standard, SourceScope first, SecondSourceRepeat, then
// KeySearch.
//
// KeySearch is the ledger property (see ledger_test.go), its stories drawing
// most on keys: 100 stories at -rapid.checks=100. Its dimensions:
//
//   - data: sources and event ids that mix case, hold multi-byte runes, a
//     '/', a ':', a space or another separator ('|', a tab, a newline, the
//     unit separator U+001F and other control characters but NUL, which
//     lab.Event.Validate alone refuses: keySeparators), or are exactly 128
//     bytes long (in runes of one to four bytes); twins of every known key,
//     each another event: the same id from each other source, the id or the
//     source with its case flipped, a trailing space, and the characters of
//     source and id split elsewhere around a '/', a ':', another separator
//     or nothing (what a key written as one string cannot tell apart);
//     pairs of new events whose sources, or ids, share their first 16, 32
//     or 64 bytes and differ only after (what a key that keeps only the
//     first bytes of either takes for one: TailTwins); one event id from
//     two sources whose FNV-1a 32 or CRC-32 is one, or which share their
//     first 16 to 127 bytes, OrderSearch's pairs alike (what a key that
//     keeps the source as a 32-bit hash takes for one: alikeSources); ids
//     and sources that are GLOB or LIKE patterns of a known key's (evt-?
//     beside evt-1: PatternTwin); repeats and changed payloads of each;
//   - concurrency: twins, repeats and new events of two or three sessions
//     interleaved at every statement;
//   - pool shape, faults and crashes as every ledger property's;
//   - time: the key holds no instant; a handler that reads time.Now (or
//     SQLite's localtime) reads it in the process's time zone, a sixth of
//     the stories in each of six zones (see Search);
//   - the model: an event is its (source, event id), byte for byte.
var SourceScope = Repair([]string{"SourceScope", "Duplicate", "PayloadConflict"}, keySearch, SecondSourceRepeat)

var keySearch = repairSearch("sourcescope", "KeySearch",
	"rapid's stories of events whose keys look alike (another source, case, space, the same characters split elsewhere around a separator or none, a long prefix alike, a 32-bit hash of the source alike, a GLOB or LIKE pattern), at once or one by one: each key is its own event",
	100, keyWeights)

// keySearchOn is KeySearch's property on v, for the tests that tell its
// stories themselves.
func keySearchOn(v lab.Variant) (propertySpec, lab.Variant) {
	env := &ledgerEnv{newInner: v.New}
	spec := &ledgerSpec{propertySpec: propertySpec{exercise: "sourcescope", name: "KeySearch", stories: 100}, env: env, weights: keyWeights}
	return spec.property(), env.variant(v)
}

// keyWeights say which steps KeySearch's stories draw most: twins of known
// keys.
var keyWeights = map[string]int{"New": 3, "Repeat": 2, "Changed": 2, "Twin": 6, "Missing": 1, "Invalid": 1, "Refused": 1, "MisCredit": 1,
	"Fault": 1, "Crash": 1, "Race": 3, "FaultRace": 1, "Reconnect": 1, "Lost": 1, "Restart": 1, "TailTwins": 2, "AlikeSources": 2, "PatternTwin": 2}

// keyCuts are the byte counts a key cut short may keep of a source or an
// id, which TailTwins draws twins alike to and different past.
var keyCuts = []int{16, 32, 64}

// keyTails are the ends of TailTwins' two sources or ids: two of one
// length, or one that is the other and more.
var keyTails = [][2]string{{"eu", "us"}, {"1", "2"}, {"", "-2"}}

// TailTwins delivers two new events whose sources, or ids, share their
// first 16, 32 or 64 bytes and differ only after, at their end
// (hooks.example/00…0eu and hooks.example/00…0us): what a key that keeps
// only the first bytes of a source or an id takes for one event.
func (lm *ledgerMachine) TailTwins(t *rapid.T) {
	cut := rapid.SampledFrom(keyCuts).Draw(t, "bytes alike")
	tails := rapid.SampledFrom(keyTails).Draw(t, "ends")
	lm.next++
	var twins [2]lab.Event
	if rapid.Bool().Draw(t, "ids alike") {
		source := rapid.SampledFrom(storySources).Draw(t, "source")
		id := exactly(cut, fmt.Sprintf("evt-%d-", lm.next), "0")
		for i, tail := range tails {
			twins[i] = lab.Event{Source: source, EventID: id + tail}
		}
	} else {
		source := exactly(cut, "hooks.example/", "0")
		for i, tail := range tails {
			twins[i] = lab.Event{Source: source + tail, EventID: fmt.Sprintf("evt-%d", lm.next)}
		}
	}
	for _, e := range twins {
		e.AccountID, e.Amount = lm.account(t), lm.amount(t)
		lm.deliver(t, "deliver a twin", e)
	}
}

// SecondSourceRepeat is the sourcescope exercise's own scenario: the key
// lives in three places (the schema, the ON CONFLICT target, the lookup of
// the stored payload), and a fix of two of them passes SourceScope. Here
// evt-1 comes from both providers with different payloads, and each is
// then repeated: each repeat must be compared with its own source's row.
var SecondSourceRepeat = labtest.Scenario{
	Name:  "SecondSourceRepeat",
	Shows: "evt-1 from provider-a and from provider-b, with different payloads, each repeated: two credits, two duplicates",
	Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2})
		a := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
		b := lab.Event{Source: "provider-b", EventID: "evt-1", AccountID: 2, Amount: 300}
		r.WantOutcome(db.Deliver(a), lab.Applied)
		r.WantOutcome(db.Deliver(b), lab.Applied)
		r.WantOutcome(db.Deliver(b), lab.Duplicate)
		r.WantOutcome(db.Deliver(a), lab.Duplicate)
		r.WantBalance(db, 1, 500)
		r.WantBalance(db, 2, 300)
	},
}
