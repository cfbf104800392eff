package scenarios

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Property lets rapid invent the stories. A random sequence of actions —
// new events, repeats, repeats with another amount or account, the same id
// from the other source, events for a missing account, deliveries with a
// fault at a random statement, a row the schema refuses, deliveries while
// another connection holds the write lock, and two deliveries at once under
// a random interleaving —
// runs against the variant and against a plain model of the ledger (which
// events were accepted, what each balance is). After every action the
// answers must be the model's and the database must equal the model. When
// they differ rapid shrinks the sequence to the smallest story that still
// breaks, and that story, numbered, is the evidence.
//
// The default run uses a fixed seed, so the matrix is the same every time;
// -rapid.seed and -rapid.checks choose others (see scenarios_test.go).
func Property(r *labtest.Run) {
	rec := &recorder{name: r.TestName()}
	// One database for all the stories, reset before each: rapid runs
	// thousands of them while it shrinks.
	c := r.Child()
	db := c.Open(propertyAccounts...)
	cases := 0
	func() {
		defer func() {
			if p := recover(); p != nil && p != errRecorderStop {
				panic(p)
			}
		}()
		rapid.Check(rec, func(t *rapid.T) {
			cases++
			c.Restart()
			db.Reset()
			ledgerMachine(t, c, db)
		})
	}()
	// The last story rapid ran is the shrunk counterexample if it found one,
	// so the invariants of its database matter only when it found none.
	c.Close()
	if !rec.failed {
		for _, f := range c.Failures() {
			r.Errorf("after the last story: %s", f)
		}
		r.Notef("rapid found no counterexample in %d random stories (-rapid.seed=%s)", cases, rapidSeed())
		return
	}
	r.Transcript.Note("", rec.log.String(), "")
	r.Errorf("%s", rec.summary)
}

// rapidSeed is the seed rapid was given, which replays the same stories.
func rapidSeed() string {
	if f := flag.Lookup("rapid.seed"); f != nil {
		return f.Value.String()
	}
	return "?"
}

// errRecorderStop ends rapid.Check when it calls FailNow on the recorder.
var errRecorderStop = errors.New("rapid gave up")

// recorder is the rapid.TB that Property hands to rapid.Check: it keeps
// rapid's report instead of failing the test, so that a naive variant being
// caught is a verdict in the matrix, not a red build. rapid's report — the
// seed that reproduces it and the shrunk story — becomes the cell's evidence.
type recorder struct {
	name    string
	log     strings.Builder
	failed  bool
	summary string
}

func (r *recorder) Helper()         {}
func (r *recorder) Name() string    { return r.name }
func (r *recorder) Failed() bool    { return r.failed }
func (r *recorder) Fail()           { r.failed = true }
func (r *recorder) FailNow()        { r.failed = true; panic(errRecorderStop) }
func (r *recorder) SkipNow()        { panic(errRecorderStop) }
func (r *recorder) Log(args ...any) { r.Logf("%s", fmt.Sprint(args...)) }
func (r *recorder) Logf(format string, args ...any) {
	fmt.Fprintf(&r.log, format+"\n", args...)
}
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !r.failed {
		r.summary = firstLine(msg)
	}
	r.failed = true
	r.Logf("%s", msg)
}
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); r.FailNow() }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }
func (r *recorder) Skip(args ...any)                  { r.SkipNow() }
func (r *recorder) Skipf(format string, args ...any)  { r.SkipNow() }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// ledger is the model: what the correct handler would have stored.
type ledger struct {
	stored   map[lab.Key]lab.Event
	balances map[int64]int64
	next     int // for fresh event ids
}

// Accounts 1 and 2 exist; account 99 never does.
var propertyAccounts = []labtest.Account{{ID: 1}, {ID: 2}}

// expect is the model's answer to e: the outcome, or the kind of error.
func (m *ledger) expect(e lab.Event) (lab.Outcome, error) {
	if _, ok := m.balances[e.AccountID]; !ok {
		return 0, lab.ErrUnknownAccount
	}
	if old, ok := m.stored[e.Key()]; ok {
		if old == e {
			return lab.Duplicate, nil
		}
		return 0, lab.ErrPayloadConflict
	}
	return lab.Applied, nil
}

// apply records e as accepted, if the model accepts it.
func (m *ledger) apply(e lab.Event) {
	if o, _ := m.expect(e); o == lab.Applied {
		m.stored[e.Key()] = e
		m.balances[e.AccountID] += e.Amount
	}
}

func (m *ledger) clone() *ledger {
	c := &ledger{stored: map[lab.Key]lab.Event{}, balances: map[int64]int64{}, next: m.next}
	for k, v := range m.stored {
		c.stored[k] = v
	}
	for k, v := range m.balances {
		c.balances[k] = v
	}
	return c
}

// story is the numbered script of one test case, for the evidence.
type story struct {
	steps []string
}

func (s *story) add(format string, args ...any) {
	s.steps = append(s.steps, fmt.Sprintf("%d. ", len(s.steps)+1)+fmt.Sprintf(format, args...))
}

func (s *story) String() string { return strings.Join(s.steps, "\n") }

// ledgerMachine is one test case: a fresh database and model, and a random
// sequence of actions.
func ledgerMachine(t *rapid.T, c *labtest.Run, db *labtest.DB) {
	m := &ledger{stored: map[lab.Key]lab.Event{}, balances: map[int64]int64{1: 0, 2: 0}}
	s := &story{}

	// fail ends the test case with the story so far.
	fail := func(format string, args ...any) {
		t.Fatalf("%s\n\nthe story:\n%s", fmt.Sprintf(format, args...), s)
	}
	// check compares an answer with the model's and the database with the
	// model after it.
	check := func(a labtest.Answer, want lab.Outcome, wantErr error) {
		switch {
		case wantErr != nil && !errors.Is(a.Err, wantErr):
			fail("Process(%v) = %v, want an error (%s)", a.Event, a, labtest.KindName(wantErr))
		case wantErr == nil && (a.Err != nil || a.Outcome != want):
			fail("Process(%v) = %v, want %v", a.Event, a, want)
		}
	}
	same := func() {
		if diff := compare(db, m); diff != "" {
			fail("the database differs from the model: %s", diff)
		}
	}
	fresh := func(t *rapid.T) lab.Event {
		m.next++
		return lab.Event{
			Source:    rapid.SampledFrom([]string{"provider-a", "provider-b"}).Draw(t, "source"),
			EventID:   fmt.Sprintf("evt-%d", m.next),
			AccountID: rapid.Int64Range(1, 2).Draw(t, "account"),
			Amount:    rapid.Int64Range(1, 10).Draw(t, "amount"),
		}
	}
	known := func(t *rapid.T) lab.Event {
		if len(m.stored) == 0 {
			t.Skip("no event delivered yet")
		}
		keys := sortedKeys(m.stored)
		return m.stored[rapid.SampledFrom(keys).Draw(t, "key")]
	}
	// newOrKnown is a new event or a known one, for the actions that try
	// both.
	newOrKnown := func(t *rapid.T) lab.Event {
		if len(m.stored) > 0 && rapid.Bool().Draw(t, "known") {
			return known(t)
		}
		return fresh(t)
	}
	// deliver uses Attempt rather than Deliver: comparing the database with
	// the model after every action already checks that a failed attempt or a
	// duplicate changed nothing.
	deliver := func(what string, e lab.Event) {
		want, wantErr := m.expect(e)
		a := db.Attempt(e)
		s.add("%s %v: %v", what, e, a)
		check(a, want, wantErr)
		m.apply(e)
		same()
	}

	t.Repeat(map[string]func(*rapid.T){
		"new": func(t *rapid.T) { deliver("deliver", fresh(t)) },
		"repeat": func(t *rapid.T) {
			deliver("redeliver", known(t))
		},
		"changed payload": func(t *rapid.T) {
			e := known(t)
			if rapid.Bool().Draw(t, "change account") {
				e.AccountID = 3 - e.AccountID
			} else {
				e.Amount += rapid.Int64Range(1, 10).Draw(t, "more")
			}
			deliver("redeliver with another payload", e)
		},
		"other source": func(t *rapid.T) {
			e := known(t)
			e.Source = map[string]string{"provider-a": "provider-b", "provider-b": "provider-a"}[e.Source]
			deliver("deliver the same id from the other source", e)
		},
		"missing account": func(t *rapid.T) {
			e := fresh(t)
			e.AccountID = 99
			deliver("deliver to a missing account", e)
		},
		"fault": func(t *rapid.T) {
			e := newOrKnown(t)
			f := labtest.Fault{
				When: rapid.SampledFrom([]labtest.When{labtest.Before, labtest.After}).Draw(t, "when"),
				N:    rapid.IntRange(1, 6).Draw(t, "statement"),
			}
			want, wantErr := m.expect(e)
			mark := c.Transcript.Len()
			fault := db.Inject(f)
			a := db.Attempt(e)
			db.Lift()
			s.add("deliver %v with a fault %s statement %d: %v\n%s", e, f.When, f.N, a, indentText(c.Transcript.From(mark)))
			if fault.Fired() == 0 {
				check(a, want, wantErr)
				m.apply(e)
				same()
				return
			}
			// The fault struck: the event is kept whole or not at all.
			applied := m.clone()
			applied.apply(e)
			kept := compare(db, applied) == "" && want == lab.Applied
			if !kept && compare(db, m) != "" {
				fail("after a fault %s statement %d, the database is neither as before nor with %v applied: %s",
					f.When, f.N, e, compare(db, m))
			}
			if a.Err == nil && !kept {
				check(a, 0, labtest.ErrInjected) // it answered success for work it did not keep
			}
			m.apply(e)
			// The retry must finish the job.
			if kept {
				want, wantErr = lab.Duplicate, nil
			}
			a = db.Attempt(e)
			s.add("redeliver %v: %v", e, a)
			check(a, want, wantErr)
			same()
		},
		"refused": func(t *rapid.T) {
			// A bug between validation and the database hands the INSERT
			// amount 0 (see DatabaseRefusal): the schema refuses the row,
			// and that must come back as an invalid event.
			e := fresh(t)
			db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpInsert, Table: "inbox", Rewrite: zeroAmount(e.Amount)})
			a := db.Attempt(e)
			db.Lift()
			s.add("deliver %v with its INSERT's amount rewritten to 0: %v", e, a)
			check(a, 0, lab.ErrInvalidEvent)
			same()
		},
		"locked": func(t *rapid.T) {
			e := newOrKnown(t)
			// The caller gives up after 50 ms (LockTimeout waits out the
			// whole busy timeout; here that would only cost time).
			release := db.HoldWriteLock()
			a := db.AttemptWithin(e, 50*time.Millisecond)
			release()
			s.add("deliver %v while another connection holds the write lock, giving up after 50 ms: %v", e, a)
			// Busy: the handler cannot know. Only a repeat it can read
			// without writing may be answered from what is committed.
			if want, _ := m.expect(e); !(want == lab.Duplicate && a.Err == nil && a.Outcome == lab.Duplicate) {
				check(a, 0, lab.ErrBusy)
			}
			same()
		},
		"race": func(t *rapid.T) {
			x := newOrKnown(t)
			y := x
			switch rapid.IntRange(0, 2).Draw(t, "pair") {
			case 1:
				y.Amount++ // the same key with another amount
			case 2:
				y = fresh(t)
			}
			mark := c.Transcript.Len()
			answers, schedule := db.Interleave(func(step int, parked []string, _ string) string {
				return rapid.SampledFrom(parked).Draw(t, fmt.Sprintf("step %d", step+1))
			}, []lab.Event{x}, []lab.Event{y})
			s.add("deliver %v and %v at once, schedule %s: %v\n%s", x, y, schedule, answers, indentText(c.Transcript.From(mark)))
			// Serializable: the answers and the database are those of x then
			// y, or of y then x.
			var diffs []string
			for _, order := range [][2]int{{0, 1}, {1, 0}} {
				model := m.clone()
				ok := true
				for _, i := range order {
					a := answers[i]
					want, wantErr := model.expect(a.Event)
					if (wantErr != nil && !errors.Is(a.Err, wantErr)) || (wantErr == nil && (a.Err != nil || a.Outcome != want)) {
						ok = false
					}
					model.apply(a.Event)
				}
				if d := compare(db, model); ok && d == "" {
					m.stored, m.balances = model.stored, model.balances
					return
				} else {
					diffs = append(diffs, d)
				}
			}
			fail("two deliveries at once, schedule %s = %v: neither order explains it (%s)", schedule, answers, strings.Join(diffs, " | "))
		},
	})
}

// compare describes how the database differs from the model, or returns "".
func compare(db *labtest.DB, m *ledger) string {
	var diffs []string
	got, inbox := db.State()
	for _, id := range []int64{1, 2} {
		if got[id] != m.balances[id] {
			diffs = append(diffs, fmt.Sprintf("balance of account %d = %d, want %d", id, got[id], m.balances[id]))
		}
	}
	for _, e := range inbox {
		if m.stored[e.Key()] != e {
			diffs = append(diffs, fmt.Sprintf("inbox holds %v, the model does not", e))
		}
	}
	if len(inbox) != len(m.stored) {
		diffs = append(diffs, fmt.Sprintf("inbox rows = %d, want %d", len(inbox), len(m.stored)))
	}
	return strings.Join(diffs, "; ")
}

func sortedKeys(m map[lab.Key]lab.Event) []lab.Key {
	keys := make([]lab.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b lab.Key) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

func indentText(s string) string {
	return "   " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n   ")
}
