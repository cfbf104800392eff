// Package exercises holds what every exercise of EXERCISES.md shares: the
// command-line switch that turns an exercise's test from a skip into a
// check, the checks built from the lab's scenarios, and the report a
// student reads when a check fails.
//
// Each exercise is a package below this one: the starting point (code to
// change) and a test that checks it. By default the test skips, so that
// go test ./... stays green whatever state the exercises are in:
//
//	go test ./exercises/sourcescope -exercise       # is my work done?
//	go test ./exercises/... -exercise.red           # CI: every starting point still fails its check
//
// An exercise is a variant: every check that takes a handler runs the
// whole matrix on it (every scenario of scenarios.All that is not a limit
// of the pattern), held to the correct standard, plus the exercise's own
// targeted checks. A fix that breaks a guarantee the starting point kept
// fails, and names it.
//
// The reference solutions are checked against the same checks on every
// go test ./... (see ../solutions), and every exercise's gallery of wrong
// fixes is asserted to be rejected (see gallery).
package exercises

import (
	"database/sql"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
)

var (
	checkFlag = flag.Bool("exercise", false, "check the exercise: the test fails until the work is done")
	redFlag   = flag.Bool("exercise.red", false, "check that the exercise's starting point fails its check (for CI: an exercise that is already solved teaches nothing)")
	showFlag  = flag.String("exercise.show", "", "with -exercise, show every failure and the whole transcript of the named `guarantee`")
	// reportFlag is what go run ./cmd/lab explain and permutations read for
	// an exercise, as they read the matrix test's report for a variant.
	reportFlag = flag.String("lab.report", "", "with -exercise, write the cells of the matrix the check ran, with their evidence and transcripts, as JSON to `file`")
)

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
}

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

// Scenario runs sc against v, held to the correct standard, unless the
// check is done, and records the failure with its transcript. It reports
// whether sc held (or did not run).
func (c *Checker) Scenario(sc labtest.Scenario, v lab.Variant) bool {
	if c.Done() {
		return true
	}
	useLabDefaults()
	cell, ok := c.ranBefore[[2]string{sc.Name, v.Name}]
	if !ok {
		cell = labtest.RunCell(c.T, sc, v)
		if c.ranBefore != nil {
			c.ranBefore[[2]string{sc.Name, v.Name}] = cell
		}
	}
	c.ran = append(c.ran, ranCell{sc, v, cell})
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
// rest in the matrix's order. Scenarios added to scenarios.All later are
// picked up without a change here.
func (c *Checker) Matrix(v lab.Variant, first []string, own ...labtest.Scenario) {
	var rest []labtest.Scenario
	for _, name := range first {
		sc, ok := MatrixScenario(name)
		if !ok {
			c.T.Fatalf("no scenario %q in scenarios.All", name)
		}
		c.Scenario(sc, v)
	}
	for _, sc := range own {
		c.Scenario(sc, v)
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

// MatrixScenario finds a scenario of scenarios.All by name.
func MatrixScenario(name string) (labtest.Scenario, bool) {
	for _, sc := range scenarios.All {
		if sc.Name == name {
			return sc, true
		}
	}
	return labtest.Scenario{}, false
}

// A Check holds an implementation to an exercise's standard and records
// what it breaks on c.
type Check[I any] func(c *Checker, impl I)

// Handler is the check of the exercises that repair a handler: the whole
// matrix, the scenarios named in first first, then the exercise's own.
func Handler(first []string, own ...labtest.Scenario) Check[lab.Variant] {
	return func(c *Checker, v lab.Variant) { c.Matrix(v, first, own...) }
}

// Run is the body of every exercise's test: it skips unless -exercise or
// -exercise.red asks for the check, and then holds impl to it. A failing
// check prints its report once: every broken guarantee with its first line,
// the first one's story in full, and the command that shows any other.
func Run[I any](t *testing.T, check Check[I], impl I) {
	t.Helper()
	switch {
	case *redFlag:
		if len(Reject(t, check, impl)) == 0 {
			t.Errorf("the starting point already passes its check: the exercise has nothing left to do")
		}
	case *checkFlag:
		c := &Checker{T: t}
		check(c, impl)
		if *reportFlag != "" {
			if err := c.report().Write(*reportFlag); err != nil {
				t.Errorf("writing the report: %v", err)
			}
		}
		if len(c.failures) > 0 {
			t.Error(Render(PackagePath(), c.failures, *showFlag))
		}
	default:
		// In package-list mode (go test ./exercises/x, go test ./...) go
		// test discards the output of a package that passes and prints
		// "ok"; a skip reason shows only with -v. The one thing it adds to
		// that summary line is "[no tests to run]", when the output says
		// so, as it does for a -run that matches nothing. That is what
		// happened here, so say it: the line then reads
		// "ok  idemlab/exercises/x  0.01s [no tests to run]", also when
		// cached.
		msg := fmt.Sprintf("exercise not checked: go test ./%s -exercise", PackagePath())
		fmt.Printf("%s%s", msg, noTestsToRun)
		t.Skip(msg)
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
		t.Errorf("the reference solution fails its exercise:\n%s", Render("the reference solution", c.failures, ""))
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
				t.Errorf("the reference solution fails its exercise:\n%s", Render("the reference solution", c.failures, ""))
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

// noTestsToRun is the line go test looks for in a test binary's output to
// add "[no tests to run]" to a package's summary line.
const noTestsToRun = "\ntesting: warning: no tests to run\n"

// transcriptLines and failureLines cap the story Render tells in full.
const transcriptLines, failureLines = 40, 8

// StoryWidth is the widest line of a story Render writes: go test indents
// a failure's lines by 8, and the whole must fit report.Width.
const StoryWidth = report.Width - 8

// Render writes a check's failures as a student reads them: a line per
// broken guarantee with its first piece of evidence, then the first one
// (or the one named by show) in full, its transcript capped at a screen,
// and the command that shows another. pkg names the package checked. Its
// lines fit StoryWidth: long ones wrap under their own start, and a
// transcript, rendered to labtest.TranscriptWidth, is indented by 2.
func Render(pkg string, failures []Failure, show string) string {
	var b strings.Builder
	wrap := func(s string, indent int) { b.WriteString(report.WrapWidth(s, indent, StoryWidth)) }
	fmt.Fprintf(&b, "%s breaks %s:\n", pkg, count(len(failures), "guarantee", "guarantees"))
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
		if len(shown) < len(lines) {
			fmt.Fprintf(&b, "  … %d more lines:\n    go test ./%s -exercise -exercise.show=%s\n", len(lines)-len(shown), strings.TrimPrefix(pkg, "./"), full.Guarantee)
		}
	}
	other := full.Guarantee
	if len(failures) > 1 && failures[0].Guarantee == full.Guarantee {
		other = failures[1].Guarantee
	}
	if len(failures) > 1 {
		fmt.Fprintf(&b, "\nsee another in full:\n  go test ./%s -exercise -exercise.show=%s", strings.TrimPrefix(pkg, "./"), other)
	}
	return b.String()
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

// count writes n with its noun, one or many: "1 guarantee", "11
// guarantees". lab/labtest and cmd/lab have the same (this package needs
// it unexported, and a shared package for one function is not worth it);
// TestCount in each holds them to the same cases.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

var labDefaults sync.Once

// useLabDefaults gives rapid the settings the matrix runs with (see
// scenarios_test.go's TestMain) unless the command line chose others: a
// fixed seed, so that a check gives the same verdict every time; no fail
// files, which rapid would write into the exercise's directory; stories
// of 15 actions; and a counterexample shrunk, with no time limit, only
// when a student will read it (-exercise): the reference solutions and the
// gallery of wrong fixes need the verdict, not the shortest story
// (scenarios.Shrinking says what shrinking costs).
func useLabDefaults() {
	labDefaults.Do(func() {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		shrink := "0s"
		if *checkFlag {
			shrink = "1000h"
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

// PackagePath names the exercise's directory, for the hint of a skipped
// test: go test runs a test in its package's directory.
func PackagePath() string {
	if wd, err := os.Getwd(); err == nil {
		if i := strings.LastIndex(wd, "/exercises/"); i >= 0 {
			return wd[i+1:]
		}
	}
	return "exercises/..."
}

// OpenDB creates a database file for a custom check: schema run on it,
// then a connection pool opened with dsn. It is closed when the test ends.
func OpenDB(t *testing.T, dsn func(path string) string, schema string) *sql.DB {
	t.Helper()
	c, err := sqlite.NewConnector(dsn(filepath.Join(t.TempDir(), "exercise.db")))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(schema); err != nil {
		t.Fatalf("schema: %v", err)
	}
	return db
}

// FailureOf is a matrix cell's verdict as a failure, for checks that run a
// scenario themselves.
func FailureOf(sc labtest.Scenario, cell *report.Cell) Failure {
	return Failure{Guarantee: sc.Name, Shows: sc.Shows, Lines: cell.Failures, Transcript: cell.Transcript}
}
