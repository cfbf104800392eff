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
	failures  []string
	where     []string // where each failure was reported: the scenario's file:line
	notes     []string
	sessions  int
	dbs       int
	opened    []*DB
	templates map[string][]byte // freshly set up database files, by seed
	pg        *pgTarget         // nil on SQLite
	trace     bool              // record every interleaving's trace (TraceCell)
	cell      *cellState        // shared by the runs of one cell (see stop.go)
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
func (r *Run) Child() *Run { return r.child() }

func (r *Run) child() *Run {
	return &Run{Variant: r.Variant, tb: r.tb, templates: r.templates, pg: r.pg, cell: r.cell}
}

// Errorf records that the variant broke a guarantee. The message follows the
// Go convention "Func(input) = got, want want" where it can.
func (r *Run) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.failures = append(r.failures, msg)
	r.where = append(r.where, r.caller())
	r.mu.Unlock()
	r.Transcript.Note("", "FAIL: "+msg, "")
}

// Notef records a piece of evidence for a run that passes, such as the
// final balance: the matrix footnotes show it.
func (r *Run) Notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// Where returns, for each failure, the file and line of the scenario code
// that reported it ("scenarios/repeat.go:31"), or "" for a failure the
// harness found on its own, such as a broken invariant.
func (r *Run) Where() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.where
}

// caller finds the scenario code that reported a failure: the first frame
// of this module that is not the engine's (the standard library's and
// rapid's frames are skipped too). The path is relative to the module.
func (r *Run) caller() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		pkg := packagePath(f.Function)
		if pkg != enginePackage && strings.HasPrefix(pkg, modulePath+"/") {
			rel, err := filepath.Rel(moduleRoot, f.File)
			if err != nil {
				rel = filepath.Base(f.File)
			}
			return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), f.Line)
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
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures
}

// Detail is the one-line evidence for the matrix: the first failure, or the
// notes of a run that passed.
func (r *Run) Detail() string {
	if len(r.failures) > 0 {
		return r.failures[0]
	}
	return strings.Join(r.notes, "; ")
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
// them. The harness calls it after the scenario body.
func (r *Run) Close() {
	for _, db := range r.opened {
		db.Check()
		if err := db.close(); err != nil {
			r.tb.Errorf("closing %s: %v", db.Path, err)
		}
	}
	r.opened = nil
	if r.pg != nil && r.pg.root == r {
		if err := r.closeKept(); err != nil {
			r.tb.Errorf("closing the databases kept for PostgreSQL cases: %v", err)
		}
	}
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
			count(len(answers), "delivery", "deliveries"), a, d, count(f, "error", "errors"), applied, duplicate, failed, msg)
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
// shows the story of one case rather than of hundreds. Case reports whether
// the case held.
func (r *Run) Case(name string, body func(c *Run)) bool {
	c := r.child()
	body(c)
	c.Close()
	if !c.Failed() {
		return true
	}
	if !r.Failed() {
		r.Transcript.Note("", "case "+name+":", "")
		r.Transcript.include(&c.Transcript)
	}
	for _, f := range c.Failures() {
		r.failures = append(r.failures, name+": "+f)
	}
	for _, w := range c.where {
		r.where = append(r.where, w)
	}
	return false
}

// Restart forgets the run's transcript, failures and session names, for a
// new story on databases that were Reset.
func (r *Run) Restart() {
	r.Transcript.reset() // not a new Transcript: that would replace a mutex someone may hold
	r.mu.Lock()
	r.failures, r.where, r.notes, r.sessions = nil, nil, nil, 0
	r.mu.Unlock()
}

// TestName is the name of the test running r, as -run selects it.
func (r *Run) TestName() string { return r.tb.Name() }

// count writes n with the noun in the number it takes: "1 error", "2 errors".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
