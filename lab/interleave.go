package lab

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Permutation is one interleaving of a scheduled run and what came of it.
type Permutation struct {
	// Schedule names the steps in the order they were released: "A1 B1 A2…",
	// where B2 is session B's second statement. A step released while
	// another session held the lock waits, and completes later on its own.
	Schedule string `json:"schedule"`
	// Outcome summarises the answers and the balances, e.g.
	// "A applied, B duplicate; balance 500".
	Outcome string `json:"outcome"`
	// Failures lists the broken guarantees; none when it held.
	Failures []string `json:"failures,omitempty"`

	transcript *Transcript
	steps      int
}

// Held reports whether every guarantee held in this interleaving.
func (p Permutation) Held() bool { return len(p.Failures) == 0 }

// Interleavings runs the sessions (one list of events each, as for
// Concurrently) in every interleaving of their statements, each on a fresh
// database seeded with accounts, and after each one checks the scenario's
// expectations (want, given a run of its own to report to) and the
// invariants. It records them all in r.Permutations; if any broke a
// guarantee it fails r with the count and the shortest failing one, whose
// transcript becomes r's.
//
// The enumeration is a depth-first search over the scheduler's decisions. At
// every decision the candidates are the sessions parked before a statement;
// a session waiting for the write lock is not one, because it cannot take a
// step until the lock is free. So interleavings that would differ only in
// where a waiting session's blocked statement sits are one interleaving, not
// many: the waiting session resumes when the holder ends its transaction,
// which the scheduler detects (see settle) rather than chooses. Each
// interleaving is run once, from the start, by replaying the decisions that
// lead to it; the first is the round-robin one that Concurrently runs. The
// permutations are returned sorted by schedule.
func (r *Run) Interleavings(accounts []Account, sessions [][]Event, want func(c *Run, db *DB, answers []Answer)) []Permutation {
	var perms []Permutation
	var explore func(plan []string)
	explore = func(plan []string) {
		c := r.child()
		db := c.Open(accounts...)
		answers, decisions := db.schedule(func(step int, _ []string, robin string) string {
			if step < len(plan) {
				return plan[step]
			}
			return robin
		}, sessions)
		want(c, db, answers)
		outcome := summarize(answers, db.snapshot())
		c.Close()
		perms = append(perms, Permutation{
			Schedule:   scheduleString(decisions),
			Outcome:    outcome,
			Failures:   c.Failures(),
			transcript: &c.Transcript,
			steps:      len(decisions),
		})
		for i := len(plan); i < len(decisions); i++ {
			for _, alt := range decisions[i].choices {
				if alt == decisions[i].chosen {
					continue
				}
				next := make([]string, 0, i+1)
				for _, d := range decisions[:i] {
					next = append(next, d.chosen)
				}
				explore(append(next, alt))
			}
		}
	}
	explore(nil)
	// The first interleaving explored is the round-robin one, and among the
	// shortest that break a guarantee the first explored is the closest to
	// it: both are the ones a reader should see.
	first := perms[0]
	var failed []Permutation
	for _, p := range perms {
		if !p.Held() {
			failed = append(failed, p)
		}
	}
	// List them in the order a reader can scan: by schedule, A before B.
	slices.SortStableFunc(perms, func(a, b Permutation) int {
		return slices.Compare(strings.Fields(a.Schedule), strings.Fields(b.Schedule))
	})
	r.Permutations = append(r.Permutations, perms...)

	if len(failed) == 0 {
		r.Transcript.Note("", fmt.Sprintf("all %d interleavings hold; the first, round robin:", len(perms)), "")
		r.Transcript.include(first.transcript)
		return perms
	}
	shortest := slices.MinFunc(failed, func(a, b Permutation) int { return a.steps - b.steps })
	r.Transcript.Note("", fmt.Sprintf("%d of %d interleavings break a guarantee; the shortest:", len(failed), len(perms)), "")
	r.Transcript.include(shortest.transcript)
	r.Errorf("%d of %d interleavings break it; the shortest, %s: %s", len(failed), len(perms), shortest.Schedule, shortest.Failures[0])
	return perms
}

// summarize describes answers and balances in one line.
func summarize(answers []Answer, s snapshot) string {
	parts := make([]string, len(answers))
	for i, a := range answers {
		what := a.Outcome.String()
		if a.Err != nil {
			what = "error (" + ErrorKind(a.Err) + ")"
		}
		parts[i] = a.Session + " " + what
	}
	var balances []string
	for _, id := range slices.Sorted(maps.Keys(s.balances)) {
		balances = append(balances, fmt.Sprintf("%d", s.balances[id]))
	}
	return strings.Join(parts, ", ") + "; balance " + strings.Join(balances, "/")
}
