package checks

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
)

// The process's time zone is a dimension of every search. A handler whose
// API has no clock can still read one: time.Now, in the zone of time.Local,
// and SQLite's 'localtime', in the zone of TZ. A fix that stamps a row in
// UTC and compares the stamp with a local time, or formats one clock two
// ways, holds in UTC and breaks west of it. But time.Local is one variable
// for the whole process, read by every test running in parallel: no story
// can set it for itself. So a search shares its stories among the zones of
// searchZones, in order (the first sixth in UTC, the next in Tokyo, …),
// and runs each share in a process of its own, the test binary started
// again with TZ set: the process runs the same test, skips every other
// guarantee, tells its share of the stories and writes the search's cell
// to a file. A story is the one it would be in one process (rapid draws
// each from the seed and its number), in its share's zone; the first share
// that breaks the search is its verdict.
//
// -exercise.zone runs every story in one zone, in this process: the
// command that replays a story names its zone so.
//
// The clock such a handler reads is its cell's bubble's (testing/synctest):
// 2000-01-01 00:00 UTC, moved by the lock waits of the story, and in the
// outbox's ResendAfterDays by pauses of a minute to a month, about two
// months in all (see pauses). A search's story crosses no local midnight
// and no daylight-saving change, and New York, São Paulo and Berlin are at
// their offsets of that January: a zone is an offset here.
// ResendAfterDays crosses midnights, and São Paulo's change of 2000-02-27.
// Only retention's clock, which its API hands the handler, is drawn near
// those (see PurgeSearch).

// searchZones are the zones a search's stories run in, in this order: the
// zones of PurgeSearch's clock (see storyZones), UTC first, so that a
// mistake that breaks in every zone is told in UTC.
var searchZones = []string{"UTC", "Asia/Tokyo", "Asia/Kathmandu", "America/Sao_Paulo", "America/New_York", "Europe/Berlin"}

var (
	zoneFlag = flag.String("exercise.zone", "", "run every search's stories in time `zone` (TZ and time.Local) alone, in this process, "+
		"as the command that replays a story does; without it a search shares its stories among six zones, each share in a process of its own")
	// The flags of a process started for one share of one search.
	shareOutFlag    = flag.String("exercise.share.out", "", "(set by a check for the process it starts) write the search's cell to `file`, and skip every other guarantee")
	shareSearchFlag = flag.String("exercise.share.search", "", "(set by a check for the process it starts) the search to run: `name#k`, its k-th run in the test")
	shareFlag       = flag.String("exercise.share", "", "(set by a check for the process it starts) the stories to tell: `a-b`, stories a to b")
)

// useZone makes zone the process's time zone, for Go (time.Local) and for
// SQLite (TZ). It runs before any test does: nothing reads time.Local
// concurrently yet.
func useZone(zone string) error {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return fmt.Errorf("-exercise.zone=%s: %w", zone, err)
	}
	time.Local = loc
	return os.Setenv("TZ", zone)
}

// processZone is the zone this process's stories run in when they run
// here: -exercise.zone's, or UTC in the quick suite (see TestMain).
func processZone() string {
	if *zoneFlag != "" {
		return *zoneFlag
	}
	return "UTC"
}

// sharing reports whether this process was started to tell one share of
// one search: every other guarantee is skipped.
func sharing() bool { return *shareOutFlag != "" }

// Skips reports whether the check skips guarantee here: in a process
// started for one share of a search, every guarantee (the search runs by
// Search); in a process started as a restarted service, every guarantee
// (ProcessRestart runs by its own test); in the quick suite, a guarantee that is not expected to reject
// a wrong fix (see RejectBy). A check that runs a guarantee without
// Scenario or Search asks it first.
func (c *Checker) Skips(guarantee string) bool {
	return sharing() || restarting() || (c.only != nil && !slices.Contains(c.only, guarantee))
}

// shareStories returns the stories this process was started to tell,
// [from, to) of the search's.
func shareStories() (from, to int) {
	var a, b int
	if _, err := fmt.Sscanf(*shareFlag, "%d-%d", &a, &b); err != nil || a < 1 || b < a {
		return 0, 0
	}
	return a - 1, b
}

// searchRuns counts, by test and search, the searches run so far: a
// process started for one share runs the same test, and tells the share
// of the same run of the same search.
var searchRuns = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// nextRun returns which run of search this is in the test running c: 1,
// 2, …
func (c *Checker) nextRun(search string) int {
	searchRuns.Lock()
	defer searchRuns.Unlock()
	key := c.T.Name() + "\x00" + search
	searchRuns.n[key]++
	return searchRuns.n[key]
}

// Search runs spec, a search, against v, held to the correct standard as
// Scenario runs a scenario. At full strength (see full) its stories are
// shared among searchZones (see above), or told here with -exercise.zone.
// In the quick suite a wrong fix of the gallery replays the story recorded
// as the first to break it (see stories_test.go), or, with none recorded,
// is searched at full strength; any other handler is told quickStories
// stories here.
func (c *Checker) Search(spec propertySpec, v lab.Variant) bool {
	if c.Done() {
		return true
	}
	run := fmt.Sprintf("%s#%d", spec.name, c.nextRun(spec.name))
	if sharing() && run != *shareSearchFlag || !sharing() && c.Skips(spec.name) {
		return true
	}
	var broke int
	switch {
	case sharing():
		from, to := shareStories()
		failed := c.T.Failed()
		pass := c.tell(spec, v, from, to, &broke)
		c.writeShare(c.ran[len(c.ran)-1].cell, broke, !failed && c.T.Failed())
		return pass
	case *zoneFlag != "" && full():
		return c.tell(spec, v, 0, storyBudget(spec.stories), &broke)
	case !full() && c.gallery:
		if rec, ok := recordedStory(c.T.Name(), run); ok && recordsApply() {
			return c.replay(spec, v, run, rec)
		}
		// No story recorded for this wrong fix, or none for this seed and
		// budget: the search at full strength (below) judges it.
	case !full():
		return c.tell(spec, v, 0, quickStories(spec.stories), &broke)
	}
	useLabDefaults()
	sc := spec.scenario(0, 0, nil)
	key := [2]string{sc.Name, v.Name}
	cell, ok := c.ranBefore[key]
	if !ok {
		var found storyRecord
		cell, found = c.inZones(run, storyBudget(spec.stories))
		if c.gallery && recordsApply() {
			c.checkRecord(run, found)
		}
		if c.ranBefore != nil {
			c.ranBefore[key] = cell
		}
	}
	return c.record(sc, v, cell)
}

// tell tells stories from+1 to to of spec on v, in this process, and
// records the verdict: in a cell of the lab, or, for a search whose stories
// run cells of their own (propertySpec.outside), on the test running c.
func (c *Checker) tell(spec propertySpec, v lab.Variant, from, to int, broke *int) bool {
	if spec.outside == nil {
		return c.scenario(spec.scenario(from, to, broke), v)
	}
	useLabDefaults()
	return c.record(spec.scenario(0, 0, nil), v, spec.outsideCell(c.T, from, to, broke))
}

// replay tells rec, the story recorded as the first to break run, the
// search spec of the test running c, on v: here if it runs in this
// process's zone, else in a process of its own. A story that holds now is
// stale: the stories changed, and the record with them (see Stale).
func (c *Checker) replay(spec propertySpec, v lab.Variant, run string, rec storyRecord) bool {
	var cell *report.Cell
	if rec.zone == processZone() {
		var broke int
		c.tell(spec, v, rec.story-1, rec.story, &broke)
		cell = c.ran[len(c.ran)-1].cell
	} else {
		useLabDefaults()
		var err error
		var testFailed bool
		cell, _, testFailed, err = c.runShare(run, rec.zone, rec.story, rec.story)
		if err != nil {
			c.T.Errorf("replaying story %d of %s in time zone %s: %v", rec.story, run, rec.zone, err)
			return true
		}
		if !cell.Pass || testFailed {
			inZone(cell, rec.zone)
		}
		c.record(spec.scenario(0, 0, nil), v, cell)
	}
	if cell.Pass {
		c.stale = append(c.stale, fmt.Sprintf("%v of %s, recorded in %s as the first to break this wrong fix, holds now: "+
			"the stories changed; record them again with\n  %s=1 go test ./checks -run '%s' -exercise.record",
			rec, run, storiesFile, labtest.FullEnv, runPattern(c.T.Name())))
	}
	return cell.Pass
}

// share is what a process started for one share of a search writes: the
// search's cell, and its transcript, which the cell's JSON leaves out; the
// number of the first story that broke it (0 if none did); and whether the
// test failed while the search ran, as the lab fails it when it cannot go
// on (a database it cannot read): the cell then is not the whole verdict.
type share struct {
	Cell       *report.Cell
	Transcript string
	Broke      int
	TestFailed bool
}

// writeShare writes cell, this process's share's verdict, the story that
// broke it, and whether the test failed while it ran, where the check that
// started it reads them.
func (c *Checker) writeShare(cell *report.Cell, broke int, testFailed bool) {
	data, err := json.Marshal(share{cell, cell.Transcript, broke, testFailed})
	if err == nil {
		err = os.WriteFile(*shareOutFlag, data, 0o644)
	}
	if err != nil {
		c.T.Errorf("writing the search's cell: %v", err)
	}
}

// inZones runs run, the search of the test running c, in a process of its
// own for each zone of searchZones that has a share of its budget of
// stories, one after another, and returns its cell: the first share's
// that broke it (or failed the test), its failures named with their zone,
// or, when every share held, one that says so; and the story that broke
// it, if one did.
func (c *Checker) inZones(run string, budget int) (*report.Cell, storyRecord) {
	var lines []report.Line
	told := 0
	for i, zone := range searchZones {
		from, to := i*budget/len(searchZones), (i+1)*budget/len(searchZones)
		if from == to {
			continue
		}
		cell, broke, testFailed, err := c.runShare(run, zone, from+1, to)
		if err != nil {
			msg := fmt.Sprintf("the stories in time zone %s could not run: %v", zone, err)
			return &report.Cell{Detail: msg, Failures: []string{msg}, Where: []string{""}, ByLab: []bool{true}}, storyRecord{}
		}
		if !cell.Pass || testFailed {
			inZone(cell, zone)
			return cell, storyRecord{zone, broke}
		}
		told += to - from
		lines = append(lines, report.Line{Text: fmt.Sprintf("in time zone %s, stories %d to %d: %s", zone, from+1, to, cell.Detail), Kind: report.KindRemark})
	}
	cell := &report.Cell{Pass: true, Detail: fmt.Sprintf("rapid found no counterexample in %d random stories, in %d time zones (-rapid.seed=%s)",
		told, len(lines), rapidSeed()), Lines: lines}
	cell.Transcript = cell.Text()
	return cell, storyRecord{}
}

// inZone names zone in cell's verdict, a share's that broke its search.
func inZone(cell *report.Cell, zone string) {
	for j, f := range cell.Failures {
		cell.Failures[j] = "in time zone " + zone + ": " + f
	}
	cell.Detail = "in time zone " + zone + ": " + cell.Detail
}

// runShare starts the test binary again to tell stories first to last of
// run, the search of the test running c, in zone, and returns the cell it
// wrote, the story that broke it (0 if none) and whether the process
// failed the test, which then fails c's, with the process's output.
func (c *Checker) runShare(run, zone string, first, last int) (*report.Cell, int, bool, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, false, err
	}
	out, err := os.CreateTemp("", "idemlab-share-*.json")
	if err != nil {
		return nil, 0, false, err
	}
	out.Close()
	defer os.Remove(out.Name())
	args := append(c.childArgs(), "-exercise.zone="+zone, "-exercise.share.out="+out.Name(), "-exercise.share.search="+run,
		fmt.Sprintf("-exercise.share=%d-%d", first, last))
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "TZ="+zone)
	output, runErr := cmd.CombinedOutput()
	data, err := os.ReadFile(out.Name())
	if err != nil || len(data) == 0 {
		return nil, 0, false, fmt.Errorf("%s wrote no verdict (%v): %s", strings.Join(cmd.Args, " "), runErr, tail(string(output), 20))
	}
	var s share
	if err := json.Unmarshal(data, &s); err != nil || s.Cell == nil {
		return nil, 0, false, fmt.Errorf("reading the verdict of %s: %v", strings.Join(cmd.Args, " "), err)
	}
	if s.TestFailed {
		c.T.Errorf("the test failed in the process that told the stories of %s in time zone %s:\n%s", run, zone, tail(string(output), 20))
	}
	s.Cell.Transcript = s.Transcript
	return s.Cell, s.Broke, s.TestFailed, nil
}

// childArgs are the arguments of a process a check starts to run the
// test running c again: the test alone, and this process's own flags but
// for the test binary's (a log file, a profile, coverage: this process's),
// -exercise.report (written here), and those that say what the child is
// for, which the caller adds.
func (c *Checker) childArgs() []string {
	args := []string{"-test.run=" + runPattern(c.T.Name())}
	flag.Visit(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") && f.Name != report.ReportFlag && !strings.HasPrefix(f.Name, "exercise.share") &&
			f.Name != "exercise.zone" && f.Name != recordFlagName && f.Name != "exercise.restart" {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// runPattern is the -test.run pattern that selects the test named name,
// and it alone.
func runPattern(name string) string {
	elems := strings.Split(name, "/")
	for i, e := range elems {
		elems[i] = "^" + regexp.QuoteMeta(e) + "$"
	}
	return strings.Join(elems, "/")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
