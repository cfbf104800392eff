// Package checks holds the check of every exercise of EXERCISES.md, and
// what the checks share: the checks built from the lab's scenarios, the
// report a student reads when a check fails, and the list of exercises its
// tests run.
//
// An exercise is a package of ../exercises, the starting point: the code
// to change. Its check is here, in a file named for it (sourcescope.go),
// so that the package a student changes imports only what correct/ does.
// The checks run from this package's tests:
//
//	go test ./checks -exercise=sourcescope   # is my work done?
//	go test ./checks -exercise.red           # CI: every starting point still fails its check
//
// Without -exercise or -exercise.red no exercise is checked, so that go
// test ./... stays green whatever state the exercises are in. The tests
// then hold every reference solution (../solutions) to its exercise's
// check, and assert that each check rejects every wrong fix of its gallery
// (the gallery_*_test.go files), for the reason expected.
//
// An exercise is a variant: every check that takes a handler runs the
// whole matrix on it (every scenario of scenarios.All that is not a limit
// of the pattern), held to the correct standard, plus the exercise's own
// targeted checks. A fix that breaks a guarantee the starting point kept
// fails, and names it. Each of exercises 1 to 9 ends with a search, a
// model-based rapid property over every dimension its guarantee depends on
// (property_test.go, ledger_test.go; its dimensions are in its check's doc), whose
// counterexample is told as the shortest story it found, with the seed
// that replays it. Exercise 11's check searches too: rapid draws the
// handlers its scenario must hold on and the rewordings of its variant it
// must catch (newvariant_test.go, newvariant_draw_test.go).
package checks

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/exercises/businesskey"
	"idemlab/exercises/checkthenact"
	"idemlab/exercises/insertorignore"
	"idemlab/exercises/markfirst"
	"idemlab/exercises/memory"
	"idemlab/exercises/missingaccount"
	"idemlab/exercises/newvariant"
	"idemlab/exercises/outbox"
	"idemlab/exercises/replay"
	"idemlab/exercises/retention"
	"idemlab/exercises/sourcescope"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
)

var (
	exerciseFlag = flag.String("exercise", "", "check the `exercise` of that name (sourcescope, …): the test fails until the work is done")
	redFlag      = flag.Bool("exercise.red", false, "check that every exercise's starting point (with -exercise, the named one's) fails its check (for CI: an exercise that is already solved teaches nothing)")
	showFlag     = flag.String("exercise.show", "", "with -exercise, show every failure and the whole transcript of the named `guarantee`")
	// reportFlag is what go run ./cmd/lab explain and permutations read for
	// an exercise, as they read the matrix test's report for a variant.
	reportFlag = flag.String(report.ReportFlag, "", "with -exercise, write the cells of the matrix the check ran, with their evidence and transcripts, as JSON to `file`")
)

// An Exercise is one exercise of EXERCISES.md, as the tests check it.
type Exercise struct {
	// Name is its package's directory in ../exercises: "sourcescope".
	Name string
	// check holds the package as it stands (the starting point, or the
	// student's work) to the exercise's check.
	check func(c *Checker)
}

// exercise is the exercise name whose check is check, run on impl.
func exercise[I any](name string, check Check[I], impl I) Exercise {
	return Exercise{Name: name, check: func(c *Checker) { check(c, impl) }}
}

// Exercises are the exercises, in EXERCISES.md's order, each with the
// package of ../exercises its check runs on.
var Exercises = []Exercise{
	exercise("sourcescope", SourceScope, sourcescope.Variant),
	exercise("missingaccount", MissingAccount, missingaccount.Variant),
	exercise("replay", Replay, replay.Starting),
	exercise("checkthenact", CheckThenAct, checkthenact.Variant),
	exercise("markfirst", MarkFirst, markfirst.Variant),
	exercise("insertorignore", InsertOrIgnore, insertorignore.Variant),
	exercise("businesskey", BusinessKey, businesskey.Starting),
	exercise("retention", Retention, retention.Starting),
	exercise("outbox", Outbox, outbox.Starting),
	exercise("memory", Memory, memory.DSN),
	exercise("newvariant", NewVariant, NewVariantWork{Variant: newvariant.Variant, Scenario: MyScenario}),
}

// Find returns the exercise called name, or an error, one line long, that
// lists the exercises there are.
func Find(name string) (Exercise, error) {
	var names []string
	for _, e := range Exercises {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return Exercise{}, fmt.Errorf("unknown exercise %q; the exercises are %s", name, strings.Join(names, ", "))
}

// selected returns the exercises the command line asks to check: the one
// -exercise names, or with -exercise.red alone every one; none without
// either. An unknown name is an error, one line long, that lists the
// exercises there are.
func selected() ([]Exercise, error) {
	switch {
	case *exerciseFlag != "":
		e, err := Find(*exerciseFlag)
		if err != nil {
			return nil, err
		}
		return []Exercise{e}, nil
	case *redFlag:
		return Exercises, nil
	}
	return nil, nil
}

// Check holds e's package to its check, as a student asks: a failing check
// reports, once, every broken guarantee with its first line, the first
// one's story in full (or, with -exercise.show, the named one's, uncapped),
// and the command that shows another. With -lab.report it writes the cells
// of the matrix it ran.
func (e Exercise) Check(t *testing.T) {
	t.Helper()
	c := &Checker{T: t}
	e.check(c)
	if *reportFlag != "" {
		if err := c.report().Write(*reportFlag); err != nil {
			t.Errorf("writing the report: %v", err)
		}
	}
	if n := RenderNeutrals("exercises/"+e.Name, c.neutral); n != "" {
		t.Log(n)
	}
	if len(c.failures) > 0 {
		t.Error(Render("exercises/"+e.Name, e.Name, c.failures, *showFlag))
	}
}

// CheckRed fails t if e's package passes its check: an exercise whose
// starting point is already solved teaches nothing. It stops at the
// check's first failure.
func (e Exercise) CheckRed(t *testing.T) {
	t.Helper()
	c := &Checker{T: t, firstOnly: true}
	e.check(c)
	if len(c.failures) == 0 {
		t.Errorf("exercises/%s already passes its check: the exercise has nothing left to do", e.Name)
	}
}

// A Failure is one guarantee that an implementation breaks.
type Failure struct {
	// Guarantee names it: a scenario of the matrix ("Race") or one of the
	// exercise's own checks ("SecondSourceRepeat").
	Guarantee string
	// Shows is what holding it means, in one line.
	Shows string
	// Lines are the broken expectations, "Func(input) = got, want want".
	Lines []string
	// Transcript is the story that broke it, if one was recorded.
	Transcript string
}

// A Checker collects the failures of one check. A check that runs many
// guarantees asks Done before each, so that a caller that needs only to
// know whether the implementation is rejected (the gallery of wrong fixes,
// -exercise.red) can stop at the first failure.
type Checker struct {
	T         *testing.T
	failures  []Failure
	firstOnly bool
	ran       []ranCell // the matrix's cells the check ran, for -lab.report
	// ranBefore holds cells other checks ran on the same handler (see
	// VerifyAll), by scenario and variant name; nil for a check on its own.
	ranBefore map[[2]string]*report.Cell
	neutral   []string // the scenarios that could not judge the handler, each with why
	// gallery is set for a wrong fix of the gallery (RejectBy): its
	// searches' first breaking stories are recorded (see stories_test.go).
	gallery bool
	// only names the guarantees the check runs, nil for all: in the quick
	// suite, those expected to reject a wrong fix.
	only []string
	// stale says why a gallery search's recorded story is not the one
	// that breaks the wrong fix (see Stale).
	stale []string
}

// Stale returns why the stories recorded for the gallery's searches (see
// stories_test.go) are out of date for this wrong fix: the quick suite
// replays a story that no longer breaks it, or the full suite first broke
// it on another. RejectBy fails its test with them; none is a verdict on
// the fix.
func (c *Checker) Stale() []string { return c.stale }

// ranCell is one scenario the check ran on one variant.
type ranCell struct {
	sc   labtest.Scenario
	v    lab.Variant
	cell *report.Cell
}

// Fail records a broken guarantee.
func (c *Checker) Fail(f Failure) { c.failures = append(c.failures, f) }

// Failf records a broken guarantee with one line of evidence.
func (c *Checker) Failf(guarantee, shows, format string, args ...any) {
	c.Fail(Failure{Guarantee: guarantee, Shows: shows, Lines: []string{fmt.Sprintf(format, args...)}})
}

// Done reports whether the check may stop: a failure was found and only
// the first one is wanted.
func (c *Checker) Done() bool { return c.firstOnly && len(c.failures) > 0 }

// Failures returns what the check found so far.
func (c *Checker) Failures() []Failure { return c.failures }

// Neutrals returns the scenarios that could not judge the handler, each as
// "Rollback: why": not failures (see Scenario).
func (c *Checker) Neutrals() []string { return c.neutral }

// RenderNeutrals writes the scenarios that could not judge subject (see
// Scenario), as a student reads them: not failures of the fix, and not
// passes either. It is "" when there are none.
func RenderNeutrals(subject string, neutrals []string) string {
	if len(neutrals) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(report.WrapWidth(fmt.Sprintf("%s: %s could not judge it. Not a failure of your fix, and no proof of it "+
		"either: what the scenario does to a delivery never happened to yours.", subject,
		report.Count(len(neutrals), "scenario", "scenarios")), 0, StoryWidth))
	for _, n := range neutrals {
		b.WriteString(report.WrapWidth("  "+report.Neutral+" "+n, 4, StoryWidth))
	}
	return b.String()
}

// Scenario runs sc against v, held to the correct standard, unless the
// check is done (or skips it: see Skips), and records the failure with its
// transcript. It reports whether sc broke nothing: it held, did not run, or
// could not judge the handler. A cell that could not judge it
// (report.Cell.Neutral: a fault the scenario injects never fired, because
// the handler runs no such statement) is not a failure of the student's
// fix, and no proof of it either: the scenario's question was not asked.
// Neutrals lists them, and Check says so.
func (c *Checker) Scenario(sc labtest.Scenario, v lab.Variant) bool {
	if c.Done() || c.Skips(sc.Name) {
		return true
	}
	return c.scenario(sc, v)
}

// scenario runs sc against v, or takes the cell another check ran (see
// VerifyAll), and records it.
func (c *Checker) scenario(sc labtest.Scenario, v lab.Variant) bool {
	useLabDefaults()
	cell, ok := c.ranBefore[[2]string{sc.Name, v.Name}]
	if !ok {
		cell = labtest.RunCell(c.T, sc, v)
		if c.ranBefore != nil {
			c.ranBefore[[2]string{sc.Name, v.Name}] = cell
		}
	}
	return c.record(sc, v, cell)
}

// record records cell, sc's verdict on v, and reports whether sc broke
// nothing.
func (c *Checker) record(sc labtest.Scenario, v lab.Variant, cell *report.Cell) bool {
	if cell == nil {
		// The lab stopped the test itself (its t.Fatalf, in the log above)
		// before the cell had a verdict: no verdict is a failure too, never
		// a nil cell to read.
		msg := "the cell gave no verdict: the lab stopped the test before it had one (its reason is in the test's log)"
		cell = &report.Cell{Detail: msg, Failures: []string{msg}, Where: []string{""}, ByLab: []bool{true}}
	}
	c.ran = append(c.ran, ranCell{sc, v, cell})
	if cell.IsNeutral() {
		c.neutral = append(c.neutral, sc.Name+": "+cell.Neutral)
	}
	if cell.Pass {
		return true
	}
	c.Fail(Failure{Guarantee: sc.Name, Shows: sc.Shows, Lines: cell.Failures, Transcript: cell.Transcript})
	return false
}

// Matrix runs the matrix against v: every scenario of scenarios.All that is
// not a limit of the pattern, held to the correct standard, the scenarios
// named in first first (an exercise's own subject, so that its failure is
// the one told in full), then own (the exercise's targeted checks), then the
// rest in the matrix's order; between own and the rest, v's DSN is held to
// the settings every connection string must keep (see settings_test.go).
// Scenarios added to scenarios.All later are picked up without a change
// here. The quick suite runs first, own and the settings alone on a
// handler the check must accept.
func (c *Checker) Matrix(v lab.Variant, first []string, own ...labtest.Scenario) {
	var rest []labtest.Scenario
	for _, name := range first {
		c.Scenario(scenarios.Named(scenarios.All, name), v)
	}
	for _, sc := range own {
		c.Scenario(sc, v)
	}
	dsnSettings(c, v)
	if !full() && c.only == nil {
		// The quick suite, on a handler the check must accept: the rest is
		// the generic matrix, which TestScenarios holds correct/ to and the
		// full suite holds this handler to (see stories_test.go).
		return
	}
	for _, sc := range NonLimit() {
		if !slices.Contains(first, sc.Name) {
			rest = append(rest, sc)
		}
	}
	for _, sc := range rest {
		c.Scenario(sc, v)
	}
}

// NonLimit returns the scenarios of the matrix that every handler must
// hold: all of scenarios.All but the limits of the pattern.
func NonLimit() []labtest.Scenario {
	var out []labtest.Scenario
	for _, sc := range scenarios.All {
		if sc.Limit == "" {
			out = append(out, sc)
		}
	}
	return out
}

// A Check holds an implementation to an exercise's standard and records
// what it breaks on c.
type Check[I any] func(c *Checker, impl I)

// Repair is the check of an exercise that repairs a handler: the whole
// matrix, the scenarios named in first first, then the exercise's own, then
// its search (a ledger property, see repairSearch).
func Repair(first []string, search Check[lab.Variant], own ...labtest.Scenario) Check[lab.Variant] {
	return func(c *Checker, v lab.Variant) {
		c.Matrix(v, first, own...)
		search(c, v)
	}
}

// report is what the check ran, as the matrix test reports it: a row per
// variant, a column per scenario, in the order they ran.
func (c *Checker) report() *report.Report {
	var scs []labtest.Scenario
	var vs []lab.Variant
	for _, r := range c.ran {
		if !slices.ContainsFunc(scs, func(s labtest.Scenario) bool { return s.Name == r.sc.Name }) {
			scs = append(scs, r.sc)
		}
		if !slices.ContainsFunc(vs, func(v lab.Variant) bool { return v.Name == r.v.Name }) {
			vs = append(vs, r.v)
		}
	}
	rep := labtest.NewReport(scs, vs)
	for _, r := range c.ran {
		rep.Set(r.v.Name, r.sc.Name, r.cell)
	}
	return rep
}

// Verify holds a reference solution to an exercise's check, always: a
// solution that fails means the exercise ships broken.
func Verify[I any](t *testing.T, check Check[I], solution I) {
	t.Helper()
	c := &Checker{T: t}
	check(c, solution)
	if len(c.failures) > 0 {
		t.Errorf("the reference solution fails its exercise:\n%s", Render("the reference solution", "", c.failures, ""))
	}
}

// VerifyAll is Verify for one solution that answers several exercises,
// each check as a subtest named for its exercise: correct, for the
// exercises that repair a naive handler. Their checks run largely the same
// cells of the matrix (the whole matrix, in another order, plus an
// exercise's own scenarios); a cell's verdict is a function of its
// scenario and handler alone, so each cell runs once and its verdict serves
// every check that asks for it.
func VerifyAll(t *testing.T, checks map[string]Check[lab.Variant], solution lab.Variant) {
	t.Helper()
	ranBefore := map[[2]string]*report.Cell{}
	for _, name := range slices.Sorted(maps.Keys(checks)) {
		t.Run(name, func(t *testing.T) {
			c := &Checker{T: t, ranBefore: ranBefore}
			checks[name](c, solution)
			if len(c.failures) > 0 {
				t.Errorf("the reference solution fails its exercise:\n%s", Render("the reference solution", "", c.failures, ""))
			}
		})
	}
}

// Reject runs check on impl until its first failure and returns it (none if
// impl passes): enough to know that the check rejects impl, and why.
func Reject[I any](t *testing.T, check Check[I], impl I) []Failure {
	t.Helper()
	c := &Checker{T: t, firstOnly: true}
	check(c, impl)
	return c.failures
}

// RejectBy is Reject for a wrong fix of the gallery that the guarantees
// named in by are expected to reject. At full strength it runs the whole
// check, and the story that first breaks each search is held to its
// record; in the quick suite it runs only the guarantees of by, each
// search among them replaying its recorded story (see stories_test.go).
func RejectBy[I any](t *testing.T, check Check[I], impl I, by []string) []Failure {
	t.Helper()
	c := &Checker{T: t, firstOnly: true, gallery: true}
	if !full() {
		c.only = by
	}
	check(c, impl)
	for _, s := range c.stale {
		t.Error(s)
	}
	return c.failures
}

// transcriptLines and failureLines cap the story Render tells in full.
const transcriptLines, failureLines = 40, 8

// StoryWidth is the widest line of a story Render writes: go test indents
// a failure's lines by 8, and the whole must fit report.Width.
const StoryWidth = report.Width - 8

// Render writes a check's failures as a student reads them: a line per
// broken guarantee with its first piece of evidence, then the first one
// (or the one named by show) in full, its transcript capped at a screen,
// and the command that shows another. subject names what was checked
// ("exercises/sourcescope"); exercise names the exercise whose check the
// commands run, "" for none (a reference solution, a wrong fix: no
// command checks them alone). Its lines fit StoryWidth: long ones wrap
// under their own start, and a transcript, rendered to
// report.TranscriptWidth, is indented by 2.
func Render(subject, exercise string, failures []Failure, show string) string {
	var b strings.Builder
	wrap := func(s string, indent int) { b.WriteString(report.WrapWidth(s, indent, StoryWidth)) }
	fmt.Fprintf(&b, "%s breaks %s:\n", subject, report.Count(len(failures), "guarantee", "guarantees"))
	width := 0
	for _, f := range failures {
		width = max(width, len(f.Guarantee))
	}
	for _, f := range failures {
		wrap(fmt.Sprintf("  ✗ %-*s  %s", width, f.Guarantee, f.Shows), width+6)
		if len(f.Lines) > 0 {
			more := ""
			if n := len(f.Lines) - 1; n > 0 {
				more = fmt.Sprintf(" (and %d more)", n)
			}
			wrap(fmt.Sprintf("    %*s  %s%s", width, "", f.Lines[0], more), width+6)
		}
	}
	full := failures[0]
	capped := show == ""
	for _, f := range failures {
		if f.Guarantee == show {
			full = f
		}
	}
	fmt.Fprintf(&b, "\n%s, in full:\n", full.Guarantee)
	// The transcript notes each failure where it happened ("FAIL: …"): a
	// failure it tells is not listed again.
	noted := failNotes(full.Transcript)
	var told []string
	for _, l := range full.Lines {
		if !noted[strings.Join(strings.Fields(l), " ")] {
			told = append(told, l)
		}
	}
	if capped && len(told) > failureLines {
		told = append(told[:failureLines], fmt.Sprintf("… %d more", len(told)-failureLines))
	}
	for _, l := range told {
		wrap("  "+l, 4)
	}
	if full.Transcript != "" {
		lines := strings.Split(strings.TrimRight(full.Transcript, "\n"), "\n")
		fmt.Fprintf(&b, "transcript:\n")
		shown := lines
		if capped && len(lines) > transcriptLines {
			shown = lines[:transcriptLines]
		}
		for _, l := range shown {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		if n := len(lines) - len(shown); n > 0 && exercise != "" {
			fmt.Fprintf(&b, "  … %d more lines:\n    %s\n", n, showCommand(exercise, full.Guarantee))
		} else if n > 0 {
			fmt.Fprintf(&b, "  … %d more lines\n", n)
		}
	}
	other := full.Guarantee
	if len(failures) > 1 && failures[0].Guarantee == full.Guarantee {
		other = failures[1].Guarantee
	}
	if len(failures) > 1 && exercise != "" {
		fmt.Fprintf(&b, "\nsee another in full:\n  %s", showCommand(exercise, other))
	}
	return b.String()
}

// showCommand is the command that checks exercise and shows every failure
// and the whole transcript of guarantee.
func showCommand(exercise, guarantee string) string {
	return fmt.Sprintf("go test ./checks -exercise=%s -exercise.show=%s", exercise, guarantee)
}

// failNotes returns the failures a transcript notes, "FAIL: …" with the
// lines it wraps onto (indented), whitespace collapsed.
func failNotes(transcript string) map[string]bool {
	notes := map[string]bool{}
	var note []string
	flush := func() {
		if note != nil {
			notes[strings.Join(strings.Fields(strings.Join(note, " ")), " ")] = true
		}
		note = nil
	}
	for _, l := range strings.Split(transcript, "\n") {
		switch {
		case strings.HasPrefix(l, "FAIL: "):
			flush()
			note = []string{strings.TrimPrefix(l, "FAIL: ")}
		case note != nil && strings.HasPrefix(l, " "):
			note = append(note, l)
		default:
			flush()
		}
	}
	flush()
	return notes
}

var labDefaults sync.Once

// exerciseShrinkTime bounds the real time rapid spends shortening the story
// that broke a student's handler (see shrinkBudget). The verdict is the
// same without shortening, and a story shortened for longer is shorter, not
// truer. Most stories are as short as they get within a second or two; a
// handler whose deliveries wait for each other on a Go lock is scheduled
// from stack dumps (see labtest's quiet.go), and a blind student's (an
// in-memory cache of activated orders behind a mutex, businesskey) would
// take rapid 16,000 replays and four minutes to shorten.
const exerciseShrinkTime = 10 * time.Second

// useLabDefaults gives rapid the settings the matrix runs with (see
// scenarios_test.go's TestMain) unless the command line chose others: a
// fixed seed, so that a check gives the same verdict every time; no fail
// files, which rapid would write into checks/; stories of 15 actions; and
// a counterexample shrunk only when a student will read it (-exercise, not
// -exercise.red), for at most exerciseShrinkTime: the reference solutions,
// the gallery of wrong fixes and the starting points of -exercise.red need
// the verdict, not the shortest story (scenarios.Shrinking says what
// shrinking costs).
func useLabDefaults() {
	labDefaults.Do(func() {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		shrink := "0s"
		if *exerciseFlag != "" && !*redFlag {
			shrink = exerciseShrinkTime.String()
		}
		for name, value := range map[string]string{
			"rapid.seed":       "1",
			"rapid.nofailfile": "true",
			"rapid.shrinktime": shrink,
			"rapid.steps":      "15",
		} {
			if !set[name] && !(name == "rapid.nofailfile" && set["rapid.failfile"]) {
				flag.Set(name, value)
			}
		}
	})
}

// FailureOf is a matrix cell's verdict as a failure, for checks that run a
// scenario themselves.
func FailureOf(sc labtest.Scenario, cell *report.Cell) Failure {
	return Failure{Guarantee: sc.Name, Shows: sc.Shows, Lines: cell.Failures, Transcript: cell.Transcript}
}
