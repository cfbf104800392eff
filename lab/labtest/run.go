// Package labtest is the engine that runs scenarios against handlers: a
// Run of one scenario against one variant, its databases (DB), the
// statement-hooking driver that records transcripts and injects faults and
// crashes below the handler, the scheduler that interleaves deliveries one
// statement at a time inside a testing/synctest bubble, and the invariants
// checked after every run. It is to package lab what net/http/httptest is
// to net/http: it exists for tests. Tests import it, and so do the packages
// that hold what tests run (scenarios, the exercises' checks); no handler
// does.
//
// Verdicts go into a [report.Report]; the scenario tests write it and the
// command renders it.
package labtest

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"idemlab/lab"
	"idemlab/lab/report"
)

// Run is one scenario run against one variant. A scenario body receives it,
// opens databases, delivers events, and reports what it found with Errorf;
// the harness decides what a failure means (a lesson for a naive variant, a
// broken build for the correct one).
type Run struct {
	// Variant is the implementation under test.
	Variant lab.Variant
	// Transcript logs every step of every session, and every failure.
	Transcript Transcript
	// Permutations holds every interleaving Interleavings ran, sorted by
	// schedule.
	Permutations []report.Permutation

	tb        testing.TB
	mu        sync.Mutex // guards failures: a session's goroutine may report one
	failures  []failure
	notes     []string
	sessions  int
	dbs       int
	opened    []*DB
	templates map[string][]byte // freshly set up database files, by seed
	pg        *serverTarget     // on a server (PostgreSQL or MariaDB); nil on SQLite
	trace     bool              // record every interleaving's trace (TraceCell)
	cell      *cellState        // shared by the runs of one cell (see stop.go)

	// What makes a run neutral (see neutralReason). Guarded by mu.
	faults    []injected // every fault injected into the run's databases
	unjudged  []unjudged // what the story needed and did not get: unfired faults, Neutralf
	direct    bool       // the run told a story on databases of its own, and it could judge
	cases     int        // cases (Case, interleavings) that judged the handler
	neutrals  int        // cases that could not
	neutral1  string     // the first of those, named, with its reason
	neutralTx *Transcript
}

// failure is a broken guarantee the run found.
type failure struct {
	msg    string
	where  string // where it was reported: the scenario's file:line (caller)
	byLab  bool   // whether the lab found it on its own (foundByTheLab)
	stands bool   // whether it stands whatever story was told (judgeFaults)
}

// injected is a fault the run's scenario injected, into which database.
type injected struct {
	db *DB
	f  *Fault
}

// unjudged is why a run could not judge the handler from some point of its
// story on: before is how many failures the run had found by then.
type unjudged struct {
	why    string
	before int
}

// NewRun starts a run of v. tb provides temporary directories and stops the
// test on a failure of the lab itself (never on a failure of the variant).
func NewRun(tb testing.TB, v lab.Variant) *Run {
	return &Run{Variant: v, tb: tb, templates: map[string][]byte{}, cell: &cellState{}}
}

// Child returns a run of the same variant with a transcript, failures and
// databases of its own, for one case of many (an interleaving, a fault
// position, a property test case). Its invariants are checked by its own
// Close.
func (r *Run) Child() *Run {
	return &Run{Variant: r.Variant, tb: r.tb, templates: r.templates, pg: r.pg, cell: r.cell}
}

// Errorf records that the variant broke a guarantee. The message follows the
// Go convention "Func(input) = got, want want" where it can.
func (r *Run) Errorf(format string, args ...any) {
	byLab := foundByTheLab()
	r.fail(fmt.Sprintf(format, args...), byLab, byLab)
}

// fail records msg, a broken guarantee: byLab says whether the lab found
// it on its own (see ByLab), stands whether it stands whatever story the
// scenario told (see judgeFaults).
func (r *Run) fail(msg string, byLab, stands bool) {
	where := moduleFrame()
	r.mu.Lock()
	r.failures = append(r.failures, failure{msg: msg, where: where, byLab: byLab, stands: stands})
	r.mu.Unlock()
	r.Transcript.Note("", "FAIL: "+msg, "")
}

// foundByTheLab reports whether the Errorf that calls it was called by the
// engine on its own — an invariant, a delivery that changed the database
// although it failed, a call without the delivery's context, a handler's
// panic, the tally of interleavings that broke — rather than for an
// expectation of the scenario's story (its own Errorf, or a Want helper).
// What the lab finds on its own holds whatever story was told, so a fault
// that never fired sets none of it aside (see judgeFaults).
func foundByTheLab() bool {
	pcs := make([]uintptr, 1)
	if runtime.Callers(3, pcs) == 0 { // the frames of Callers, foundByTheLab and Errorf skipped
		return false
	}
	f, _ := runtime.CallersFrames(pcs).Next()
	return packagePath(f.Function) == enginePackage && !strings.Contains(f.Function, ".(*Run).Want")
}

// neutralf records that the run cannot judge the handler: something the
// story needs did not happen (a delivery the lab was to stall ran past the
// point it stalls at), so what the scenario goes on to expect assumes a
// story that was not told. The failures it reports from here on are set
// aside when the run closes; those found before, and the invariants, which
// hold whatever the story, still count. A fault that never fires does the
// same on its own (see Fault.Fired).
func (r *Run) neutralf(format string, args ...any) {
	why := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.unjudged = append(r.unjudged, unjudged{why: why, before: len(r.failures)})
	r.mu.Unlock()
	r.Transcript.Note("", "CANNOT JUDGE: "+why, "")
}

// injected records a fault injected into db, one of the run's databases,
// for Close to check that it fired.
func (r *Run) injected(db *DB, f *Fault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f.before = len(r.failures)
	r.faults = append(r.faults, injected{db: db, f: f})
}

// neutralReason returns why the run could not judge the handler, or "" if it
// could. A run is neutral when it broke no guarantee and either a fault
// its scenario meant to fire never did (or something else its story
// needed did not happen: Neutralf), or every case it ran (Case, the
// interleavings of Interleavings) was neutral. It is no verdict for the
// handler and none against it: the scenario's question was not asked. A
// run with a broken guarantee is never neutral, whatever its other cases
// did.
func (r *Run) neutralReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case len(r.failures) > 0:
		return ""
	case len(r.unjudged) > 0:
		whys := make([]string, len(r.unjudged))
		for i, u := range r.unjudged {
			whys[i] = u.why
		}
		return strings.Join(whys, "; ")
	case r.neutrals > 0 && r.cases == 0 && !r.direct:
		if r.neutrals == 1 {
			return r.neutral1
		}
		return fmt.Sprintf("none of its %d cases could judge the handler; the first, %s", r.neutrals, r.neutral1)
	}
	return ""
}

// Notef records a piece of evidence for a run that passes, such as the
// final balance: the matrix footnotes show it.
func (r *Run) Notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// moduleFrame finds the code of the module's own, outside the engine,
// that called the engine (the standard library's and rapid's frames are
// skipped too): the scenario code that reported a failure, or the handler
// code that raised a panic being recovered, for a deferred function that
// recovers it. It names it as shortPath does, or returns "".
func moduleFrame() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		pkg := packagePath(f.Function)
		if pkg != enginePackage && strings.HasPrefix(pkg, modulePath+"/") {
			return shortPath(f.File, f.Line)
		}
		if !more {
			return ""
		}
	}
}

// packagePath returns the import path of the package of a function as the
// runtime names it: "idemlab/scenarios.Duplicate.func1" → "idemlab/scenarios".
func packagePath(function string) string {
	slash := strings.LastIndex(function, "/")
	if dot := strings.Index(function[slash+1:], "."); dot >= 0 {
		return function[:slash+1+dot]
	}
	return function
}

// enginePackage, modulePath and moduleRoot locate the engine's own code and
// the module's, to tell scenario frames from the rest.
var enginePackage, modulePath, moduleRoot = func() (string, string, string) {
	pc, file, _, _ := runtime.Caller(0)
	pkg := packagePath(runtime.FuncForPC(pc).Name())
	return pkg, strings.TrimSuffix(pkg, "/lab/labtest"), filepath.Dir(filepath.Dir(filepath.Dir(file)))
}()

// Failed reports whether any guarantee was broken.
func (r *Run) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) > 0
}

// Failures returns every broken guarantee, in the order found.
func (r *Run) Failures() []string {
	msgs, _, _ := r.failureLists()
	return msgs
}

// failureLists returns, for each failure, its message; the file and line
// of the scenario code that reported it ("scenarios/repeat.go:31"), or ""
// for a failure the harness found on its own, such as a broken invariant;
// and whether the lab found it on its own (foundByTheLab: a check it
// makes around every delivery or when the run closes, whatever the
// scenario expects) rather than as an expectation of the scenario's story
// (its Errorf, a Want helper). A case's failure is the lab's when it was
// in the case; the tally of Interleavings is the lab's when the failure it
// quotes is.
func (r *Run) failureLists() (msgs, where []string, byLab []bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.failures {
		msgs, where, byLab = append(msgs, f.msg), append(where, f.where), append(byLab, f.byLab)
	}
	return msgs, where, byLab
}

// detail is the one-line evidence for the matrix: the first failure, why
// a neutral run could not judge, or the notes of a run that passed, with
// how many of its cases could not judge, if any did.
func (r *Run) detail() string {
	if why := r.neutralReason(); why != "" {
		return why
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failures) > 0 {
		return r.failures[0].msg
	}
	detail := strings.Join(r.notes, "; ")
	if r.neutrals > 0 {
		if detail != "" {
			detail += "; "
		}
		detail += fmt.Sprintf("%d of %d cases could not judge the handler; the first, %s", r.neutrals, r.neutrals+r.cases, r.neutral1)
	}
	return detail
}

// nextSession names the next session: A, B, …, Z, AA, AB, …
func (r *Run) nextSession() string {
	n := r.sessions
	r.sessions++
	name := ""
	for {
		name = string(rune('A'+n%26)) + name
		n = n/26 - 1
		if n < 0 {
			return name
		}
	}
}

// Close checks the invariants of every database the run opened and closes
// them, then checks that every fault the scenario meant to fire did (see
// Fault.Fired): if one did not, the run is neutral (see neutralReason). The
// harness calls it after the scenario body.
func (r *Run) Close() {
	told := len(r.opened) > 0
	for _, db := range r.opened {
		db.check()
		if err := db.close(); err != nil {
			r.tb.Errorf("closing %s: %v", db.Path, err)
		}
	}
	r.opened = nil
	r.judgeFaults()
	r.mu.Lock()
	r.direct = r.direct || told && len(r.unjudged) == 0
	story, first := r.neutralTx, r.neutral1
	showStory := story != nil && len(r.failures) == 0 && r.cases == 0 && !r.direct && len(r.unjudged) == 0
	r.neutralTx = nil
	r.mu.Unlock()
	if showStory {
		r.Transcript.Note("", "no case could judge the handler; the first, "+first+":", "")
		r.Transcript.include(story)
	}
	if r.pg != nil && r.pg.root == r {
		if err := r.closeKept(); err != nil {
			r.tb.Errorf("closing the databases kept for PostgreSQL cases: %v", err)
		}
	}
}

// judgeFaults makes the run neutral from the injection of the first fault
// it meant to fire and that never fired: the failures its scenario
// reported from that point on assumed the fault struck, and are set aside;
// those found before, those the lab found on its own (the invariants
// Close checks, a call without the delivery's context, …: foundByTheLab),
// and the verdicts of cases and interleavings, judged already, stand.
func (r *Run) judgeFaults() {
	r.mu.Lock()
	faults := r.faults
	r.faults = nil
	r.mu.Unlock()
	for _, in := range faults {
		if !in.f.meant() || in.f.fired > 0 {
			continue
		}
		why := in.f.unfired(in.db.answerOf(in.f.Session))
		r.mu.Lock()
		r.unjudged = append(r.unjudged, unjudged{why: why, before: in.f.before})
		r.mu.Unlock()
		r.Transcript.Note("", "CANNOT JUDGE: "+why, "")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unjudged) == 0 {
		return
	}
	from := len(r.failures)
	for _, u := range r.unjudged {
		from = min(from, u.before)
	}
	failures := r.failures[:from:from]
	for _, f := range r.failures[from:] {
		if f.stands {
			failures = append(failures, f)
		}
	}
	n := len(r.failures) - len(failures)
	r.failures = failures
	if n == 0 {
		return
	}
	what := fmt.Sprintf("the %d failures above are set aside: they judged", n)
	if n == 1 {
		what = "the failure above is set aside: it judged"
	}
	r.Transcript.Note("", "("+what+" the story the scenario meant, which was not told)", "")
}

// answerOf is how session answered its delivery on db, briefly
// ("duplicate", "an error (busy)"), or "" if it has not answered (or
// session is "").
func (db *DB) answerOf(session string) string {
	if session == "" {
		return ""
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, a := range db.answers {
		if a.Session != session {
			continue
		}
		if a.Err != nil {
			return "an error (" + lab.ErrorKind(a.Err) + ")"
		}
		return a.Outcome.String()
	}
	return ""
}

// WantOutcome reports a failure unless a is the successful outcome want.
func (r *Run) WantOutcome(a Answer, want lab.Outcome) bool {
	if a.Err != nil || a.Outcome != want {
		r.Errorf("%s: Process(%v) = %v, want %v", a.Session, a.Event, a, want)
		return false
	}
	return true
}

// WantError reports a failure unless a is an error of the given kind
// (checked with errors.Is).
func (r *Run) WantError(a Answer, kind error) bool {
	if !errors.Is(a.Err, kind) {
		r.Errorf("%s: Process(%v) = %v, want an error (%s)", a.Session, a.Event, a, KindName(kind))
		return false
	}
	return true
}

// WantBalance reports a failure unless account id has balance want.
func (r *Run) WantBalance(db *DB, id, want int64) {
	if got := db.Balance(id); got != want {
		r.Errorf("balance of account %d = %d, want %d", id, got, want)
	}
}

// WantInbox reports a failure unless the inbox holds want rows.
func (r *Run) WantInbox(db *DB, want int) {
	if got := db.InboxRows(); got != want {
		r.Errorf("inbox rows = %d, want %d", got, want)
	}
}

// WantCounts reports a failure unless the answers hold exactly that many
// applied, duplicate and failed deliveries.
func (r *Run) WantCounts(answers []Answer, applied, duplicate, failed int) {
	a, d, f := Count(answers)
	if a != applied || d != duplicate || f != failed {
		msg := ""
		for _, x := range answers {
			if x.Err != nil {
				msg = " (first error: " + x.Session + ": " + x.String() + ")"
				break
			}
		}
		r.Errorf("%s = %d applied, %d duplicate, %s, want %d, %d, %d%s",
			report.Count(len(answers), "delivery", "deliveries"), a, d, report.Count(f, "error", "errors"), applied, duplicate, failed, msg)
	}
}

// KindName names an error kind the way Answer.String does ("busy",
// "payload conflict", …), or by its text for an error that is not one of
// the kinds (such as ErrInjected).
func KindName(kind error) string {
	if name := lab.ErrorKind(kind); name != "other error" {
		return name
	}
	return kind.Error()
}

// Case runs body as one case of a scenario that tries many (a fault at each
// statement, a crash at each point), on a run of its own. The case's broken
// guarantees are reported on r, prefixed with its name; the transcript of
// the first case that breaks one becomes part of r's, so that a failure
// shows the story of one case rather than of hundreds. A case that could
// not judge the handler (see neutralReason) breaks nothing; if no case of r
// could judge, r is neutral, and shows the first one's story. Case
// reports whether the case broke no guarantee.
func (r *Run) Case(name string, body func(c *Run)) bool {
	c := r.Child()
	body(c)
	c.Close()
	if !c.Failed() {
		if why := c.neutralReason(); why != "" {
			r.caseNeutral("case "+name, why, &c.Transcript)
		} else {
			r.caseJudged(1)
		}
		return true
	}
	r.caseJudged(1)
	if !r.Failed() {
		r.Transcript.Note("", "case "+name+":", "")
		r.Transcript.include(&c.Transcript)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	// A case's failures are its verdict, judged already: they stand.
	for _, f := range c.failures {
		f.msg, f.stands = name+": "+f.msg, true
		r.failures = append(r.failures, f)
	}
	return false
}

// caseJudged counts n cases of r that judged the handler.
func (r *Run) caseJudged(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cases += n
}

// caseNeutral counts a case of r, named name, that could not judge the
// handler, why, with its story (nil when the caller shows it itself).
func (r *Run) caseNeutral(name, why string, story *Transcript) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.neutrals == 0 {
		r.neutral1, r.neutralTx = name+": "+why, story
	}
	r.neutrals++
}

// Restart forgets the run's transcript, failures and session names, for a
// new story on databases that were Reset.
func (r *Run) Restart() {
	r.Transcript.reset() // not a new Transcript: that would replace a mutex someone may hold
	r.mu.Lock()
	r.failures, r.notes, r.sessions = nil, nil, 0
	r.faults, r.unjudged, r.direct = nil, nil, false
	r.cases, r.neutrals, r.neutral1, r.neutralTx = 0, 0, "", nil
	r.mu.Unlock()
}

// TestName is the name of the test running r, as -run selects it.
func (r *Run) TestName() string { return r.tb.Name() }
