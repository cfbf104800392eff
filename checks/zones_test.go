package checks

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"idemlab/lab"
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
// 2000-01-01 00:00 UTC, moved only by the lock waits of the story. It
// crosses no local midnight and no daylight-saving change, and New York,
// São Paulo and Berlin are at their offsets of that January: a zone is an
// offset here. Only retention's clock, which its API hands the handler, is
// drawn near those (see PurgeSearch).

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
	shareFlag       = flag.String("exercise.share", "", "(set by a check for the process it starts) the share of the stories to tell: `i/n`, the i-th of n")
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

// sharing reports whether this process was started to tell one share of
// one search: every other guarantee is skipped.
func sharing() bool { return *shareOutFlag != "" }

// Skips reports whether the check skips every guarantee but its search
// here: a process started for one share of it. A check that runs a
// guarantee without Scenario asks it first.
func (c *Checker) Skips() bool { return sharing() }

// storyShare returns the stories, of budget, this process tells: all of
// them, or its share's, [from, to).
func storyShare(budget int) (from, to int) {
	var i, n int
	if _, err := fmt.Sscanf(*shareFlag, "%d/%d", &i, &n); err != nil || n <= 0 {
		return 0, budget
	}
	return i * budget / n, (i + 1) * budget / n
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
// Scenario runs a scenario, its stories shared among searchZones (see
// above); with -exercise.zone, all of them here.
func (c *Checker) Search(spec propertySpec, v lab.Variant) bool {
	if c.Done() {
		return true
	}
	sc := spec.scenario()
	run := fmt.Sprintf("%s#%d", spec.name, c.nextRun(spec.name))
	switch {
	case sharing():
		if run != *shareSearchFlag {
			return true
		}
		failed := c.T.Failed()
		pass := c.scenario(sc, v)
		c.writeShare(c.ran[len(c.ran)-1].cell, !failed && c.T.Failed())
		return pass
	case *zoneFlag != "":
		return c.scenario(sc, v)
	}
	useLabDefaults()
	key := [2]string{sc.Name, v.Name}
	cell, ok := c.ranBefore[key]
	if !ok {
		cell = c.inZones(run, storyBudget(spec.stories))
		if c.ranBefore != nil {
			c.ranBefore[key] = cell
		}
	}
	return c.record(sc, v, cell)
}

// share is what a process started for one share of a search writes: the
// search's cell, and its transcript, which the cell's JSON leaves out; and
// whether the test failed while the search ran, as the lab fails it when
// it cannot go on (a database it cannot read): the cell then is not the
// whole verdict.
type share struct {
	Cell       *report.Cell
	Transcript string
	TestFailed bool
}

// writeShare writes cell, this process's share's verdict, and whether the
// test failed while it ran, where the check that started it reads them.
func (c *Checker) writeShare(cell *report.Cell, testFailed bool) {
	data, err := json.Marshal(share{cell, cell.Transcript, testFailed})
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
// or, when every share held, one that says so.
func (c *Checker) inZones(run string, budget int) *report.Cell {
	var lines []report.Line
	told := 0
	for i, zone := range searchZones {
		from, to := i*budget/len(searchZones), (i+1)*budget/len(searchZones)
		if from == to {
			continue
		}
		cell, testFailed, err := c.runShare(run, zone, i)
		if err != nil {
			msg := fmt.Sprintf("the stories in time zone %s could not run: %v", zone, err)
			return &report.Cell{Detail: msg, Failures: []string{msg}, Where: []string{""}, ByLab: []bool{true}}
		}
		if !cell.Pass || testFailed {
			for j, f := range cell.Failures {
				cell.Failures[j] = "in time zone " + zone + ": " + f
			}
			cell.Detail = "in time zone " + zone + ": " + cell.Detail
			return cell
		}
		told += to - from
		lines = append(lines, report.Line{Text: fmt.Sprintf("in time zone %s, stories %d to %d: %s", zone, from+1, to, cell.Detail), Kind: report.KindRemark})
	}
	cell := &report.Cell{Pass: true, Detail: fmt.Sprintf("rapid found no counterexample in %d random stories, in %d time zones (-rapid.seed=%s)",
		told, len(lines), rapidSeed()), Lines: lines}
	cell.Transcript = cell.Text()
	return cell
}

// runShare starts the test binary again for the i-th share of run, the
// search of the test running c, in zone, and returns the cell it wrote and
// whether the process failed the test, which then fails c's, with the
// process's output.
func (c *Checker) runShare(run, zone string, i int) (*report.Cell, bool, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, false, err
	}
	out, err := os.CreateTemp("", "idemlab-share-*.json")
	if err != nil {
		return nil, false, err
	}
	out.Close()
	defer os.Remove(out.Name())
	args := []string{"-test.run=" + runPattern(c.T.Name())}
	flag.Visit(func(f *flag.Flag) {
		// The test binary's own flags (a log file, a profile, coverage)
		// are this process's; -exercise.report is written here.
		if !strings.HasPrefix(f.Name, "test.") && f.Name != report.ReportFlag && !strings.HasPrefix(f.Name, "exercise.share") && f.Name != "exercise.zone" {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	args = append(args, "-exercise.zone="+zone, "-exercise.share.out="+out.Name(), "-exercise.share.search="+run,
		fmt.Sprintf("-exercise.share=%d/%d", i, len(searchZones)))
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "TZ="+zone)
	output, runErr := cmd.CombinedOutput()
	data, err := os.ReadFile(out.Name())
	if err != nil || len(data) == 0 {
		return nil, false, fmt.Errorf("%s wrote no verdict (%v): %s", strings.Join(cmd.Args, " "), runErr, tail(string(output), 20))
	}
	var s share
	if err := json.Unmarshal(data, &s); err != nil || s.Cell == nil {
		return nil, false, fmt.Errorf("reading the verdict of %s: %v", strings.Join(cmd.Args, " "), err)
	}
	if s.TestFailed {
		c.T.Errorf("the test failed in the process that told the stories of %s in time zone %s:\n%s", run, zone, tail(string(output), 20))
	}
	s.Cell.Transcript = s.Transcript
	return s.Cell, s.TestFailed, nil
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
