package report

// Cell is one variant's verdict on one scenario.
//
// A cell says one of three things. It holds (Pass, no Neutral): the
// scenario judged the handler and every guarantee held. It breaks (not
// Pass): a guarantee broke, and Failures say which. Or it is neutral
// (Neutral set): the scenario could not judge the handler, because
// something its story needed did not happen — a fault it injects never
// fired (the handler ran no "UPDATE of accounts": it credits by a
// trigger), an argument rewrite found no argument to rewrite (the handler
// binds the amount as another Go type). A neutral cell is no verdict
// against the handler, so Pass is true and Failures are empty; nor is it
// one for it, so it is never shown as a pass: Mark, and every renderer,
// give it a mark of its own. Code that asks only whether the handler
// broke something reads Pass; code that shows a verdict asks Mark.
type Cell struct {
	// Pass is false when the cell found a broken guarantee, true when it
	// found none: it held, or it was neutral.
	Pass bool `json:"pass"`
	// Neutral, when set, says why the cell could not judge the handler:
	// "the fault 'before the UPDATE of accounts' never fired: the handler
	// ran no such statement". A cell is neutral only when none of its
	// cases broke a guarantee and none could judge; a cell some of whose
	// cases could not judge and the rest held is a pass, and its Detail
	// says how many could not.
	Neutral string `json:"neutral,omitempty"`
	// Detail is the one-line evidence: the first broken guarantee, or what
	// a passing run showed.
	Detail string `json:"detail"`
	// Failures lists every broken guarantee.
	Failures []string `json:"failures,omitempty"`
	// Where holds, for each failure, the file:line of the scenario code
	// that reported it, or "" for one the harness found on its own (a
	// broken invariant).
	Where []string `json:"where,omitempty"`
	// ByLab holds, for each failure, whether the lab found it on its own
	// — a check it makes around every delivery or when the run closes (a
	// failed delivery that changed the database, an inbox row without its
	// credit, a handler's panic, …), which holds whatever the scenario
	// expects — rather than as an expectation of the scenario's story
	// (its Errorf, a Want helper). A check that wants a scenario to say
	// itself what broke reads it.
	ByLab []bool `json:"by_lab,omitempty"`
	// Lines is the run's full transcript, a line per step.
	Lines []Line `json:"lines,omitempty"`
	// Transcript is Lines as text (Text), set by the engine for the
	// checks that print a cell's failure in the process that ran it. It
	// is not written to JSON: a program that reads a report renders
	// Lines.
	Transcript string `json:"-"`
	// Permutations lists every interleaving a scenario enumerated.
	Permutations []Permutation `json:"permutations,omitempty"`
}

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
	// Neutral, when set, says why this interleaving could not judge the
	// handler (a fault meant for it never fired): it neither held nor
	// broke, and has no Failures.
	Neutral string `json:"neutral,omitempty"`
	// Waited lists the steps that had to wait for another session's lock,
	// e.g. "B1": the session's first statement waited.
	Waited []string `json:"waited,omitempty"`
	// Trace is the state at every decision and the transcript, recorded
	// only for a stepper (labtest.TraceCell).
	Trace *Trace `json:"trace,omitempty"`
}

// Held reports whether no guarantee broke in this interleaving: it held,
// or it could not judge (Neutral).
func (p Permutation) Held() bool { return len(p.Failures) == 0 }

// Mark is the verdict of the interleaving as the kit shows it: Pass, Fail
// or Neutral.
func (p Permutation) Mark() string { return mark(p.Held(), p.Neutral) }

// Mark is the cell's verdict as the matrix shows it: Pass, Fail or
// Neutral.
func (c *Cell) Mark() string { return mark(c.Pass, c.Neutral) }

// mark is Fail unless held, then Neutral if neutral says why the verdict
// could not judge, else Pass.
func mark(held bool, neutral string) string {
	switch {
	case !held:
		return Fail
	case neutral != "":
		return Neutral
	}
	return Pass
}

// Text renders the cell's transcript (Lines) as the terminal shows it, in
// TranscriptWidth columns.
func (c *Cell) Text() string { return RenderTranscript(c.Lines, TranscriptWidth) }

// IsNeutral reports whether the cell could not judge the handler.
func (c *Cell) IsNeutral() bool { return c.Pass && c.Neutral != "" }

// Marks used in the matrix.
const (
	Pass    = "✓"
	Fail    = "✗"
	Neutral = "○" // could not judge the handler (see Cell)
	None    = "·" // not run
)
