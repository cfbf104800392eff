package labtest

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"idemlab/lab"
)

// twoWrites credits the account in two autocommit statements: two steps
// that take the write lock only while they run.
type twoWrites struct{ db *sql.DB }

func (h twoWrites) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	for range 2 {
		if _, err := h.db.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = ?`, e.Amount, e.AccountID); err != nil {
			return 0, err
		}
	}
	return lab.Applied, nil
}

// Two sessions of two independent steps each have C(4,2) = 6 interleavings,
// and the enumeration must find each exactly once.
func TestInterleavingsAreExhaustive(t *testing.T) {
	v := testVariant
	v.New = func(db *sql.DB) lab.Processor { return twoWrites{db} }
	synctest.Test(t, func(t *testing.T) {
		r := NewRun(t, v)
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 1}
		perms := r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(c *Run, db *DB, answers []Answer) {
			c.WantBalance(db, 1, 4)
		})
		// twoWrites applies every delivery, so the invariants fail each
		// interleaving; only the balance, the want above, must hold.
		var got []string
		for _, p := range perms {
			got = append(got, p.Schedule)
			if slices.ContainsFunc(p.Failures, func(f string) bool { return strings.HasPrefix(f, "balance of account 1") }) {
				t.Errorf("interleaving %s: %v", p.Schedule, p.Failures)
			}
		}
		want := []string{"A1 A2 B1 B2", "A1 B1 A2 B2", "A1 B1 B2 A2", "B1 A1 A2 B2", "B1 A1 B2 A2", "B1 B2 A1 A2"}
		if !slices.Equal(got, want) {
			t.Errorf("Interleavings(two sessions of two writes) = %q, want %q", got, want)
		}
	})
}

// With BEGIN IMMEDIATE the second session waits at its BEGIN until the
// first commits, so it is never a candidate in between: of the C(8,4) = 70
// orders of two four-step transactions only 8 can happen (the waiting
// session's BEGIN released after 0, 1, 2 or 3 of the other's 4 steps, or
// after all of them, for each session first; 2 × 4 = 8).
func TestInterleavingsSkipWaitingSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewRun(t, testVariant)
		a := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 1}
		b := a
		b.EventID = "evt-2"
		perms := r.Interleavings(nil, [][]lab.Event{{a}, {b}}, func(c *Run, db *DB, answers []Answer) {
			c.WantBalance(db, 1, 2)
		})
		if len(perms) != 8 {
			var got []string
			for _, p := range perms {
				got = append(got, p.Schedule)
			}
			t.Fatalf("Interleavings(two immediate transactions) = %d: %s, want 8", len(perms), strings.Join(got, " | "))
		}
		if !strings.Contains(r.Transcript.String(), "<waiting>") {
			t.Errorf("the round-robin interleaving's transcript has no <waiting> line:\n%s", r.Transcript.String())
		}
		if r.Failed() {
			t.Errorf("Interleavings(two immediate transactions) failed: %v", r.Failures())
		}
	})
}

// A named plan is followed step by step, then round robin.
func TestPlan(t *testing.T) {
	v := testVariant
	v.New = func(db *sql.DB) lab.Processor { return twoWrites{db} }
	synctest.Test(t, func(t *testing.T) {
		r := NewRun(t, v)
		db := r.Open()
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 1}
		_, got := db.Interleave(Plan("B1 A1"), []lab.Event{e}, []lab.Event{e})
		// A plan whose numbers are not the sessions' next steps is refused (this run's sessions are C and D).
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "parked at C1") {
					t.Errorf("Interleave(Plan(\"C7\")) panicked with %v, want a panic naming C1", p)
				}
			}()
			db.Interleave(Plan("C7"), []lab.Event{e}, []lab.Event{e})
		}()
		r.Close()
		if want := "B1 A1 B2 A2"; got != want {
			t.Errorf("Interleave(Plan(\"B1 A1\")) schedule = %q, want %q", got, want)
		}
	})
}

// drifting is twoWrites until its fifth call, and one write from then on: a
// database that answers differently on the same schedule looks like this
// to the lab.
type drifting struct {
	db    *sql.DB
	calls *atomic.Int64
}

func (h drifting) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	writes := 2
	if h.calls.Add(1) >= 5 {
		writes = 1
	}
	for range writes {
		if _, err := h.db.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = ?`, e.Amount, e.AccountID); err != nil {
			return 0, err
		}
	}
	return lab.Applied, nil
}

// fatalTB records a Fatalf instead of failing the test, and ends the
// goroutine that called it, as the real one does.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// A replay that does not meet what the run it replays met is the lab's
// failure, named as such, not a verdict and not a panic: its verdict
// would depend on something outside the test. drifting changes what the
// sessions do from its fifth delivery on, in the enumeration's third
// interleaving, a replay of a prefix of the first two: it ends a step
// early.
func TestInterleavingsRefuseADriftingReplay(t *testing.T) {
	v := testVariant
	var calls atomic.Int64
	v.New = func(db *sql.DB) lab.Processor { return drifting{db, &calls} }
	synctest.Test(t, func(t *testing.T) {
		tb := &fatalTB{TB: t}
		r := NewRun(tb, v)
		e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 1}
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(*Run, *DB, []Answer) {})
		}()
		<-done
		if want := "did not do what they did in"; !strings.Contains(tb.msg, want) {
			t.Errorf("Interleavings(a drifting handler) stopped with %q, want a message containing %q", tb.msg, want)
		}
	})
}

// divergence must name the first decision at which a replay departs from
// its plan, whichever way it departs, and only then.
func TestDivergence(t *testing.T) {
	d := func(step string, choices ...string) decision {
		return decision{chosen: step[:1], step: step, choices: choices}
	}
	plan := []decision{d("A1", "A", "B"), d("B1", "A", "B"), d("B2", "A", "B")}
	for _, c := range []struct {
		name string
		got  []decision
		want int
	}{
		{"followed, and went on", append(slices.Clone(plan), d("A2", "A")), -1},
		{"another step of the same session", []decision{d("A1", "A", "B"), d("B1", "A", "B"), d("B3", "A", "B")}, 2},
		{"another set of parked sessions", []decision{d("A1", "A", "B"), d("B1", "B"), d("B2", "A", "B")}, 1},
		{"ended early", plan[:2], 2},
	} {
		if got := divergence(plan, c.got); got != c.want {
			t.Errorf("divergence(plan, %s) = %d, want %d", c.name, got, c.want)
		}
	}
}
