package checks

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"idemlab/correct"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
)

// What the exercises' properties share. Each exercise's check ends with a
// property: rapid draws stories over every dimension the exercise's
// guarantee depends on (the data, the clock, the interleaving of
// deliveries and background jobs, the pool's shape, faults and crashes),
// runs each on a fresh database, and after every step compares what the
// handler did with a model of what an ideal one would have done. A story
// that breaks shrinks (with -exercise) to the smallest one that still does,
// told step by step, with the seed that replays it.

// A propertySpec is one exercise's property, as a scenario of its check.
type propertySpec struct {
	// exercise names the exercise, for the command that replays a story.
	exercise string
	// name is the guarantee's name ("SourceScopeSearch"), shows what holding
	// it means.
	name, shows string
	// stories is how many stories a check draws at -rapid.checks=100 (the
	// default): at most 100; a larger -rapid.checks draws proportionally
	// more.
	stories int
	// story tells one story on c, drawing from t; it fails t with the
	// story so far when the handler strays from the model.
	story func(c *labtest.Run, t *rapid.T)
	// outside, set instead of story, tells one story outside any cell, on
	// tb: a search whose story is which handler a scenario runs on, each
	// run a cell of its own (see NewVariant). It fails t with the story
	// when one breaks the property.
	outside func(tb *testing.T, t *rapid.T)
}

// scenario is spec as a scenario of the lab, run like any other cell: it
// tells stories from+1 to to of the search (rapid draws each from the seed
// and its number, so story k is the same whichever stories are told
// beside it), and sets *broke to the number of the first story that broke
// the property, if one did.
func (spec propertySpec) scenario(from, to int, broke *int) labtest.Scenario {
	if spec.outside != nil {
		return labtest.Scenario{Name: spec.name, Shows: spec.shows} // named only: see tell
	}
	return labtest.Scenario{Name: spec.name, Shows: spec.shows, Run: func(r *labtest.Run) { spec.run(r, from, to, broke) }}
}

func (spec propertySpec) run(r *labtest.Run, from, to int, broke *int) {
	rec, told := spec.check(r.TestName(), from, to, broke, func(t *rapid.T) { spec.story(r.Child(), t) })
	if !rec.failed && told < to {
		// rapid ends a search early when its stories' time, on the cell's
		// clock, says the test's deadline is near (rapid's findBug): a
		// story that moved that clock by days (a sleep in the bubble) ends
		// it after one story, and the search holds by telling none. That
		// is the lab's fault, never the handler's; the solutions' tests
		// meet it first.
		r.Errorf("the lab's search ended after %d of its %d stories: rapid stopped early, as it does when a story "+
			"moves the cell's clock by days; a fault of the check, not of the handler", told, to)
		return
	}
	if !rec.failed {
		r.Notef("rapid found no counterexample in %s (-rapid.seed=%s)", storyRange(from, min(told, to)), rapidSeed())
		return
	}
	r.Transcript.Note("", rec.evidence(), "")
	r.Errorf("%s", rec.summary)
}

// check tells stories from+1 to to with tell, under rapid, for the test
// called name, and returns rapid's report and how many stories it told;
// *broke is set to the number of the first story that broke the property,
// if one did.
func (spec propertySpec) check(name string, from, to int, broke *int, tell func(t *rapid.T)) (*storyRecorder, int) {
	rec := &storyRecorder{name: name, exercise: spec.exercise, guarantee: spec.name}
	told, failing := 0, false
	var budget shrinkBudget
	func() {
		defer func() {
			if p := recover(); p != nil && p != errRecorderStop {
				panic(p)
			}
		}()
		rapid.Check(rec, func(t *rapid.T) {
			// Once a story has broken the property, every replay runs:
			// rapid is shrinking it. Before, the budget ends the search
			// (a check's runs past it pass without a story).
			if !failing && told >= to {
				return
			}
			told++
			if !failing && told <= from {
				return // a story told elsewhere: in another zone, or not at all (see Search)
			}
			// (A search told outside any cell reads the real clock, as
			// rapid does: its own deadline ends the shortening.)
			if failing && !rec.failed && spec.outside == nil && budget.spent() {
				return // a shorter story rapid tries, past its time: taken as one that holds
			}
			budget.lastBroke = false
			defer func() {
				if p := recover(); p != nil {
					if !failing {
						*broke = told
						if spec.outside == nil {
							budget.start()
						}
					}
					failing, budget.lastBroke = true, true
					panic(p)
				}
			}()
			tell(t)
		})
	}()
	return rec, told
}

// outsideCell tells stories from+1 to to of spec, a search whose stories
// run cells of their own (spec.outside), on tb, and returns its verdict as
// a cell's: what rapid found, with the story that broke it, told as run
// tells a search's.
func (spec propertySpec) outsideCell(tb *testing.T, from, to int, broke *int) *report.Cell {
	var tr labtest.Transcript
	rec, told := spec.check(tb.Name(), from, to, broke, func(t *rapid.T) { spec.outside(tb, t) })
	if !rec.failed {
		detail := fmt.Sprintf("rapid found no counterexample in %s (-rapid.seed=%s)", storyRange(from, min(told, to)), rapidSeed())
		return &report.Cell{Pass: true, Detail: detail}
	}
	tr.Note("", rec.evidence(), "")
	tr.Note("", "FAIL: "+rec.summary, "")
	return &report.Cell{Detail: rec.summary, Failures: []string{rec.summary}, Where: []string{""}, ByLab: []bool{false},
		Lines: tr.Lines(), Transcript: tr.String()}
}

// A shrinkBudget ends rapid's shortening of a story that broke a property
// once -rapid.shrinktime of real time has passed. rapid measures that time
// with time.Now, which inside a cell's synctest bubble reads the bubble's
// fake clock, moved only by the scheduler: a microsecond a step, and the
// lock waits of the stories. A handler whose deliveries wait on a Go lock
// hardly moves it, and rapid shortened a blind student's story for four
// minutes (businesskey's memory_map: 16,000 stories told, 9.6 s on the
// bubble's clock). So once the budget is spent, the bubble's clock is moved
// past rapid's deadline, which rapid reads before each part of a story it
// tries to shorten, and each shorter story rapid tries meanwhile is taken
// as one that holds without being told. rapid keeps the shortest story it
// has found to break the property, and tells it once more for the verdict.
// A story rapid tries right after one that broke the property (or
// panicked, as a story that runs out of draws does) is always told: rapid
// tells a story that broke it twice, and the second telling must break it
// again.
type shrinkBudget struct {
	over      <-chan struct{} // closed once the budget is spent; nil before a story broke the property
	moved     bool            // the bubble's clock was moved past rapid's deadline
	lastBroke bool            // the story told last broke the property
}

// realAfter is labtest.RealAfter, which TestShrinkingEndsInRealTime
// replaces by a budget already spent.
var realAfter = labtest.RealAfter

// start starts the budget, once a story has broken the property.
func (b *shrinkBudget) start() { b.over = realAfter(shrinkTime()) }

// spent reports whether the next story rapid tries, shortening one, is to
// be taken as one that holds without being told.
func (b *shrinkBudget) spent() bool {
	select {
	case <-b.over:
	default:
		return false
	}
	if !b.moved {
		b.moved = true
		time.Sleep(shrinkTime()) // the bubble's clock: every other goroutine of it is idle between two stories
	}
	return !b.lastBroke
}

// shrinkTime is -rapid.shrinktime.
func shrinkTime() time.Duration {
	if f := flag.Lookup("rapid.shrinktime"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil {
			return d
		}
	}
	return exerciseShrinkTime
}

// storyRange names stories from+1 to to, for a search's verdict: "100
// random stories", or "story 37" when one story was told again.
func storyRange(from, to int) string {
	if to-from == 1 && from > 0 {
		return fmt.Sprintf("story %d", to)
	}
	return report.Count(max(0, to-from), "random story", "random stories")
}

// storyBudget is how many stories a property of n stories draws: n at the
// default -rapid.checks=100, proportionally more or fewer at another.
func storyBudget(n int) int {
	checks := 100
	if f := flag.Lookup("rapid.checks"); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); err == nil {
			checks = v
		}
	}
	return max(1, n*checks/100)
}

// rapidSeed is the seed rapid was given, which replays the same stories.
func rapidSeed() string {
	if f := flag.Lookup("rapid.seed"); f != nil {
		return f.Value.String()
	}
	return "?"
}

// errRecorderStop ends rapid.Check when it calls FailNow on the recorder.
var errRecorderStop = errors.New("rapid gave up")

// storyRecorder is the rapid.TB a property hands to rapid.Check: it keeps
// rapid's report, so that a broken property is the check's verdict with its
// story, not a failed test binary.
type storyRecorder struct {
	name, exercise, guarantee string
	log                       strings.Builder // what rapid logged after its report: the story
	failed                    bool
	summary                   string // the failure's one line
	seed                      string // the seed that replays it
	unreplayed                bool   // rapid could not replay the story (see Errorf): what it logs after is not the story
}

func (r *storyRecorder) Helper()         {}
func (r *storyRecorder) Name() string    { return r.name }
func (r *storyRecorder) Failed() bool    { return r.failed }
func (r *storyRecorder) Fail()           { r.failed = true }
func (r *storyRecorder) FailNow()        { r.failed = true; panic(errRecorderStop) }
func (r *storyRecorder) SkipNow()        { panic(errRecorderStop) }
func (r *storyRecorder) Log(args ...any) { r.Logf("%s", fmt.Sprint(args...)) }
func (r *storyRecorder) Logf(format string, args ...any) {
	if r.unreplayed {
		return
	}
	line := fmt.Sprintf(format, args...)
	if strings.HasPrefix(line, "[rapid] draw ") {
		return // the story says what was drawn, in words
	}
	r.log.WriteString(line + "\n")
}
func (r *storyRecorder) Error(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *storyRecorder) Fatal(args ...any)                 { r.Error(args...); r.FailNow() }
func (r *storyRecorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }
func (r *storyRecorder) Skip(args ...any)                  { r.SkipNow() }
func (r *storyRecorder) Skipf(format string, args ...any)  { r.SkipNow() }

// rapidHead matches the head of rapid's report of a failure: how many
// stories passed first, and the failure's first line.
var rapidHead = regexp.MustCompile(`^\[rapid\] (failed|panic) after (\d+) tests: ([^\n]*)`)

// storySeedFlag matches the seed rapid's report names.
var storySeedFlag = regexp.MustCompile(`-rapid\.seed=(\d+)`)

func (r *storyRecorder) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.failed {
		r.Logf("%s", msg)
		return
	}
	r.failed = true
	if m := storySeedFlag.FindStringSubmatch(msg); m != nil {
		r.seed = m[1]
	}
	if first, ok := unreplayed(msg); ok {
		// rapid ran the failing story again, at once, from the same draws,
		// and it did not fail the same way (it passed, broke elsewhere, or
		// drew past its end): the story depends on something besides its
		// draws. The first failure, with its story, is the evidence.
		r.unreplayed = true
		line, _, _ := strings.Cut(first, "\n")
		r.summary = "a random story broke it, but did not break it again when rapid replayed it from the same draws: " + line
		r.log.WriteString(first + "\n\n(rapid's replay of this story from the same draws did not break it the same way: " +
			"the story depends on something besides its draws, which is a fault of the check, not of the handler)\n")
		return
	}
	m := rapidHead.FindStringSubmatch(msg)
	if m == nil {
		r.summary = "[rapid] " + strings.SplitN(strings.TrimPrefix(msg, "[rapid] "), "\n", 2)[0]
		return
	}
	held := "the first random story breaks it"
	if m[2] != "0" {
		held = fmt.Sprintf("%s random stories held, then one broke it", m[2])
	}
	if m[1] == "panic" {
		held += " with a panic"
	}
	r.summary = held + ": " + m[3]
}

// tracebackLine matches a line of a traceback in rapid's report.
var tracebackLine = regexp.MustCompile(`^    \S+:\d+ in \S+$`)

// unreplayed returns the first failure of rapid's report that a story that
// broke the property did not break it again when rapid replayed it
// ("[rapid] flaky test, can not reproduce a failure"), with its story: the
// report ends "Original traceback (FAILURE):", the traceback's lines,
// then "Failed test output:".
func unreplayed(msg string) (string, bool) {
	if !strings.HasPrefix(msg, "[rapid] flaky test") {
		return "", false
	}
	const head = "\nOriginal traceback ("
	_, rest, ok := strings.Cut(msg, head)
	if !ok {
		return "", false
	}
	rest, _, _ = strings.Cut(rest, "Failed test output:")
	lines := strings.Split(strings.TrimRight(rest, "\n"), "\n")
	end := len(lines)
	for end > 0 && tracebackLine.MatchString(lines[end-1]) {
		end--
	}
	if end == 0 {
		return "", false
	}
	failure := strings.Join(lines[:end], "\n")
	failure, ok = strings.CutSuffix(failure, "):")
	return failure, ok
}

// evidence is what the cell's transcript shows of rapid's report: the
// failure, the command that replays the story (and shrinks it, if this run
// did not), and the story.
func (r *storyRecorder) evidence() string {
	replay := "go test ./checks -exercise=" + r.exercise + " -exercise.show=" + r.guarantee
	if *zoneFlag != "" {
		replay += " -exercise.zone=" + *zoneFlag
	}
	if r.seed != "" {
		replay += " -rapid.seed=" + r.seed
	}
	return fmt.Sprintf("rapid: %s\nreplay it:\n  %s\n%s", r.summary, replay, strings.TrimRight(r.log.String(), "\n"))
}

// A story is the numbered script of one test case, for the evidence.
type story struct {
	head  []string // what the story starts from: the pool, the balances, the clock
	steps []string
}

// setup records what the story starts from.
func (s *story) setup(format string, args ...any) {
	s.head = append(s.head, fmt.Sprintf(format, args...))
}

// add records a step.
func (s *story) add(format string, args ...any) {
	s.steps = append(s.steps, fmt.Sprintf("%d. ", len(s.steps)+1)+fmt.Sprintf(format, args...))
}

func (s *story) String() string {
	return strings.Join(append(append([]string(nil), s.head...), s.steps...), "\n")
}

// indented indents a transcript's excerpt under a step of a story.
func indented(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "\n   " + strings.ReplaceAll(s, "\n", "\n   ")
}

// A poolShape is how many connections the handler's pool may open: one
// (as correct's doc recommends on SQLite), two, or as many as it likes.
type poolShape int

// The shapes a property draws.
var poolShapes = []poolShape{1, 2, 0}

func (p poolShape) String() string {
	switch p {
	case 0:
		return "a pool of as many connections as it opens"
	case 1:
		return "a pool of one connection"
	}
	return fmt.Sprintf("a pool of at most %d connections", int(p))
}

// drawShape draws a pool's shape.
func drawShape(t *rapid.T) poolShape {
	return rapid.SampledFrom(poolShapes).Draw(t, "pool")
}

// TestUnreplayedStory holds the recorder to telling a story that broke the
// property but not rapid's replay of it ("[rapid] flaky test") by its
// first failure and story, not by rapid's head line alone.
func TestUnreplayedStory(t *testing.T) {
	msg := "[rapid] flaky test, can not reproduce a failure\n" +
		"To try to reproduce, specify -run=\"TestExercise\" -rapid.seed=7\n" +
		"Traceback (invalid data: overrun):\n" +
		"    /x/checks/property_test.go:70 in idemlab/checks.propertySpec.run.func1.2.1\n" +
		"Original traceback (Purge(t) deleted provider-a/evt-1\n\nthe story:\n1. deliver provider-a/evt-1\n    A1: BEGIN -> ok):\n" +
		"    /x/checks/ledger_test.go:298 in idemlab/checks.(*ledgerSpec).tell\n" +
		"Failed test output:"
	r := &storyRecorder{}
	r.Errorf("%s", msg)
	r.Logf("the replay's own output")
	if want := "a random story broke it, but did not break it again when rapid replayed it from the same draws: Purge(t) deleted provider-a/evt-1"; r.summary != want {
		t.Errorf("summary = %q, want %q", r.summary, want)
	}
	if log := r.log.String(); !strings.Contains(log, "1. deliver provider-a/evt-1\n    A1: BEGIN -> ok\n") || strings.Contains(log, "replay's own") || r.seed != "7" {
		t.Errorf("log, seed = %q, %q, want the first failure's story, without the replay's output, and seed 7", log, r.seed)
	}
}

// TestShrinkingEndsInRealTime holds a search to shortening the story that
// broke it for -rapid.shrinktime of real time, however little the stories
// move the bubble's clock (see shrinkBudget): here the budget is spent as
// soon as it starts. A story breaks the property when its one draw is 500
// or more. Past the budget rapid still tells the story that broke it once
// more, as it always does, and each shorter story it tries right after one
// that broke it (or ran out of draws); it takes every other as holding,
// and tells the one it kept for the verdict: 6 stories after the first
// here. rapid used to read its budget on the bubble's clock, which these
// stories never move, and told 968, bringing the draw down to 500.
func TestShrinkingEndsInRealTime(t *testing.T) {
	// Not parallel: -rapid.shrinktime is every search's.
	useLabDefaults()
	f := flag.Lookup("rapid.shrinktime")
	was := f.Value.String()
	f.Value.Set(exerciseShrinkTime.String())
	defer f.Value.Set(was)
	spent := make(chan struct{})
	close(spent)
	realAfter = func(time.Duration) <-chan struct{} { return spent }
	defer func() { realAfter = labtest.RealAfter }()

	var told, brokeAt int
	spec := propertySpec{exercise: "test", name: "BelowHalf", shows: "every draw below 500", stories: 100,
		story: func(_ *labtest.Run, t *rapid.T) {
			told++
			if x := rapid.IntRange(0, 1000).Draw(t, "x"); x >= 500 {
				t.Fatalf("draw = %d, want below 500", x)
			}
		}}
	cell := labtest.RunCell(t, spec.scenario(0, 100, &brokeAt), correct.Variant)
	if cell.Pass || !strings.Contains(cell.Detail, "want below 500") {
		t.Fatalf("RunCell(BelowHalf) = %v, %q, want a story that broke it", cell.Pass, cell.Detail)
	}
	t.Logf("story %d broke it; %d stories told in all", brokeAt, told)
	if after := told - brokeAt; after > 6 {
		t.Errorf("stories told after the one that broke BelowHalf = %d, want at most 6", after)
	}
}
