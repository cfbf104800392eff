package labtest

import (
	"strconv"
	"testing"
	"testing/synctest"

	"idemlab/lab"
	"idemlab/lab/report"
)

// TraceCell is RunCell with every interleaving's trace recorded: the state
// of each session at each decision of the scheduler and the transcript as
// lines. It is what a stepper is built from (package workshop); the matrix
// does without, since traces make a report several times larger.
func TraceCell(t *testing.T, sc Scenario, v lab.Variant) *report.Cell {
	var cell *report.Cell
	synctest.Test(t, func(t *testing.T) {
		r := NewRun(t, v)
		r.trace = true
		sc.Run(r)
		r.Close()
		cell = &report.Cell{
			Pass:         !r.Failed(),
			Detail:       r.Detail(),
			Failures:     r.Failures(),
			Where:        r.Where(),
			ByLab:        r.ByLab(),
			Lines:        r.Transcript.Lines(),
			Transcript:   r.Transcript.String(),
			Permutations: r.Permutations,
		}
	})
	return cell
}

// traceOf builds the trace of one interleaving from its decisions and its
// run's transcript.
func traceOf(decisions []decision, t *Transcript) *report.Trace {
	tr := &report.Trace{Lines: t.Lines()}
	for _, d := range decisions {
		tr.Decisions = append(tr.Decisions, report.Decision{Sessions: d.view, Lines: d.lines})
	}
	return tr
}

// view describes every session as the scheduler sees it before a decision.
// A waiting session waits on the sessions that are inside a transaction:
// SQLite has one writer, so the lock it needs is held by one of them.
func (sc *scheduler) view() []report.SessionState {
	answers := map[string]string{}
	sc.db.mu.Lock()
	for _, a := range sc.db.answers {
		answers[a.Session] = a.String()
	}
	sc.db.mu.Unlock()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []report.SessionState
	for _, s := range sc.sessions {
		st := report.SessionState{Name: s.name}
		switch {
		case s.parkedAt != nil:
			st.State, st.Step, st.Text = report.Ready, s.parkedAt.label(), escapeControls(s.parkedAt.Text())
		case s.waiting && s.blockedAt != nil:
			st.State, st.Step, st.Text = report.Waiting, s.blockedAt.label(), escapeControls(s.blockedAt.Text())
			for _, o := range sc.sessions {
				if o != s && o.inTx && !o.done {
					st.WaitingOn = append(st.WaitingOn, o.name)
				}
			}
		default:
			st.State, st.Answer = report.Done, escapeControls(answers[s.name])
		}
		out = append(out, st)
	}
	return out
}

// label names a statement as a schedule does: "B2".
func (s *stmt) label() string { return s.Session + strconv.Itoa(s.N) }
