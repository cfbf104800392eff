package report

// A Trace is what an interactive stepper needs of one interleaving: the
// state of every session at each of the scheduler's decisions, and the
// transcript as structured lines. The engine records it only when asked
// (labtest.TraceCell), because the matrix needs none of it and a report
// with traces is several times larger.
//
// The stepper never runs a database: a scheduled run inside a
// testing/synctest bubble needs a *testing.T, so a plain server cannot
// replay one. Instead one go test run exports every interleaving with its
// trace, and the stepper walks the tree they form (Tree).
// Interleavings that share a schedule prefix share the decisions along it
// (replay is deterministic), so the tree is exact, and exhaustive: it holds
// every schedule the engine can run.
type Trace struct {
	// Decisions holds one entry per step of the schedule, the state just
	// before that step was chosen.
	Decisions []Decision `json:"decisions"`
	// Lines is the interleaving's whole transcript.
	Lines []Line `json:"lines"`
	// End is the database once every session is done.
	End *DBState `json:"end,omitempty"`
}

// Decision is the state of a scheduled run at one of its decisions.
type Decision struct {
	// Sessions holds every session, in session order.
	Sessions []SessionState `json:"sessions"`
	// Lines is how many transcript lines were written before it: the
	// transcript a student has seen so far.
	Lines int `json:"lines"`
	// State is the database at that moment.
	State *DBState `json:"state,omitempty"`
}

// The states a session can be in at a decision.
const (
	Ready   = "ready"   // parked before a statement: it may be chosen
	Waiting = "waiting" // its statement waits for a lock another session holds
	Done    = "done"    // it has answered
)

// SessionState is one session at a decision.
type SessionState struct {
	Name  string `json:"name"`  // "A"
	State string `json:"state"` // Ready, Waiting or Done
	// Step and Text name the statement it is parked before, or waits in:
	// "B2" and its SQL with the arguments in place.
	Step string `json:"step,omitempty"`
	Text string `json:"text,omitempty"`
	// WaitingOn names the sessions inside a transaction while it waits:
	// the ones whose lock it needs.
	WaitingOn []string `json:"waitingOn,omitempty"`
	// Answer is what a done session answered: "applied", "error (…): …".
	Answer string `json:"answer,omitempty"`
}
