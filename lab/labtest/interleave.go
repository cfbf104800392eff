package labtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"idemlab/lab"
	"idemlab/lab/report"
)

// tried is one interleaving that Interleavings ran: what the report shows of
// it, and what the run keeps to show the shortest failing one in full.
type tried struct {
	report.Permutation
	byLab      []bool // whether the lab found each of its failures on its own (Run.failureLists)
	transcript *Transcript
	steps      int
}

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
// permutations are returned sorted by schedule. Faults, if any, are
// injected into every interleaving's database before it starts; an
// interleaving in which one of them never fired could not judge the
// handler (its Permutation says why, in Neutral) and counts for neither
// side: if no interleaving could judge, r is neutral (see Run.neutralReason).
func (r *Run) Interleavings(accounts []Account, sessions [][]lab.Event, want func(c *Run, db *DB, answers []Answer), faults ...Fault) []report.Permutation {
	var perms []tried
	var explore func(plan []decision)
	explore = func(plan []decision) {
		c := r.Child()
		db := c.OpenScheduled(accounts...)
		for _, f := range faults {
			db.Inject(f)
		}
		followed := true
		var states []*report.DBState // the database at each decision, for a stepper (TraceCell)
		answers, decisions := db.schedule(func(step int, parked []string, robin string) string {
			if r.trace {
				states = append(states, db.traceState(slices.Concat(sessions...), last(states)))
			}
			if step < len(plan) && followed {
				if slices.Contains(parked, plan[step].chosen) {
					return plan[step].chosen
				}
				followed = false // finish round robin, then report it below
			}
			return robin
		}, sessions)
		if at := divergence(plan, decisions); at >= 0 || !followed {
			msg := diverged(r, db, plan, decisions, at, &c.Transcript) // before Close adds its checks
			c.Close()
			r.tb.Fatalf("%s", msg)
		}
		var end *report.DBState
		if r.trace {
			end = db.traceState(slices.Concat(sessions...), last(states))
		}
		want(c, db, answers)
		outcome := summarize(answers, db.snapshot())
		c.Close()
		failures, _, byLab := c.failureLists()
		var trace *report.Trace
		if r.trace {
			trace = traceOf(decisions, states, end, &c.Transcript)
		}
		perms = append(perms, tried{
			Permutation: report.Permutation{
				Schedule: scheduleString(decisions),
				Outcome:  outcome,
				Failures: failures,
				Neutral:  c.neutralReason(),
				Waited:   c.Transcript.waits(),
				Trace:    trace,
			},
			byLab:      byLab,
			transcript: &c.Transcript,
			steps:      len(decisions),
		})
		for i := len(plan); i < len(decisions); i++ {
			for _, alt := range decisions[i].choices {
				if alt == decisions[i].chosen {
					continue
				}
				next := slices.Clone(decisions[:i+1])
				next[i].chosen = alt
				next[i].step = stepOf(decisions[i].view, alt)
				explore(next)
			}
		}
	}
	explore(nil)
	// The first interleaving explored is the round-robin one, and among the
	// shortest that break a guarantee the first explored is the closest to
	// it: both are the ones a reader should see.
	first := perms[0]
	var failed, neutral []tried
	for _, p := range perms {
		switch {
		case !p.Held():
			failed = append(failed, p)
		case p.Neutral != "":
			neutral = append(neutral, p)
		}
	}
	// An interleaving in which a fault the scenario meant to fire never
	// did could not judge the handler: it counts for neither side.
	r.caseJudged(len(perms) - len(neutral))
	for _, p := range neutral {
		r.caseNeutral("interleaving "+p.Schedule, p.Neutral, nil)
	}
	// List them in the order a reader can scan: by schedule, A before B.
	slices.SortStableFunc(perms, func(a, b tried) int {
		return slices.Compare(strings.Fields(a.Schedule), strings.Fields(b.Schedule))
	})
	list := make([]report.Permutation, len(perms))
	for i, p := range perms {
		list[i] = p.Permutation
	}
	r.Permutations = append(r.Permutations, list...)

	if len(failed) == 0 {
		head := fmt.Sprintf("all %d interleavings hold", len(perms))
		switch {
		case len(neutral) == len(perms):
			head = fmt.Sprintf("none of the %d interleavings could judge the handler", len(perms))
		case len(neutral) > 0:
			head = fmt.Sprintf("all %d interleavings that could judge the handler hold (%d could not: %s)",
				len(perms)-len(neutral), len(neutral), neutral[0].Neutral)
		}
		r.Transcript.Note("", head+"; the first, round robin:", "")
		r.Transcript.include(first.transcript)
		return list
	}
	shortest := slices.MinFunc(failed, func(a, b tried) int { return a.steps - b.steps })
	r.Transcript.Note("", fmt.Sprintf("%d of %d interleavings break a guarantee; the shortest:", len(failed), len(perms)), "")
	r.Transcript.include(shortest.transcript)
	// The tally is a verdict judged already, and as much the lab's own
	// finding as the failure it quotes.
	r.fail(fmt.Sprintf("%d of %d interleavings break it; the shortest, %s: %s", len(failed), len(perms), shortest.Schedule, shortest.Failures[0]),
		shortest.byLab[0], true)
	return list
}

// divergence returns the first decision at which a replay did not meet
// what the run it replays met: other sessions parked, or the chosen one at
// another statement. It returns -1 when the replay followed the plan.
func divergence(plan, got []decision) int {
	for i, want := range plan {
		if i >= len(got) || !slices.Equal(want.choices, got[i].choices) || want.step != got[i].step {
			return i
		}
	}
	return -1
}

// stepOf returns the step session name is parked at in view ("B3").
func stepOf(view []report.SessionState, name string) string {
	for _, st := range view {
		if st.Name == name {
			return st.Step
		}
	}
	return ""
}

// diverged says how a replay left the run it replays, for the lab's
// failure: an interleaving that does not replay cannot be trusted, whatever
// verdict it gave. The schedule was the same, so the handler keeps state
// from one delivery to the next (a counter, a cache, the clock), or
// something outside the test changed what the database answered.
func diverged(r *Run, db *DB, plan, got []decision, at int, t *Transcript) string {
	head := fmt.Sprintf("lab: replaying the schedule %s …, the sessions did not do what they did in the run it replays", scheduleString(plan))
	switch {
	case at >= 0 && at < len(got):
		head += fmt.Sprintf(": before step %d that run had %s parked and took %s; this one had %s parked and took %s",
			at+1, strings.Join(plan[at].choices, ", "), plan[at].step, strings.Join(got[at].choices, ", "), got[at].step)
	case at >= 0:
		head += fmt.Sprintf(": before step %d that run had %s parked and took %s; this one had ended",
			at+1, strings.Join(plan[at].choices, ", "), plan[at].step)
	}
	head += ". The schedule was the same: either the handler keeps state from one delivery to the next " +
		"(a counter, a cache, the clock), or something outside the test changed what the database answered."
	var b strings.Builder
	b.WriteString(strings.Join(report.WrapWords(head, report.TranscriptWidth, 0), "\n"))
	if db.pg != nil {
		level, _ := r.Server()
		b.WriteString(db.pg.interference(level.Isolation == lab.Serializable))
	}
	b.WriteString("\nThis run's transcript:\n")
	b.WriteString(t.String())
	return b.String()
}

// summarize describes answers and balances in one line.
func summarize(answers []Answer, s snapshot) string {
	parts := make([]string, len(answers))
	for i, a := range answers {
		what := a.Outcome.String()
		if a.Err != nil {
			what = "error (" + lab.ErrorKind(a.Err) + ")"
		}
		parts[i] = a.Session + " " + what
	}
	var balances []string
	for _, id := range slices.Sorted(maps.Keys(s.balances)) {
		balances = append(balances, fmt.Sprintf("%d", s.balances[id]))
	}
	return strings.Join(parts, ", ") + "; balance " + strings.Join(balances, "/")
}
