package checks

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"idemlab/correct"
	"idemlab/lab/labtest"
	"idemlab/naive/sourceless"
)

// The checks' own tests run at two strengths. A student's check
// (-exercise, -exercise.red) and the full suite (IDEMLAB_FULL=1 go test
// ./..., as CI runs it) tell every search's 100 stories in six time zones,
// a process for each zone (see zones_test.go). The quick suite, plain go
// test ./..., is for the developer after every edit, and it must still
// reject every wrong fix of the gallery:
//
//   - a wrong fix runs only the guarantees its test expects to reject it
//     (see RejectBy);
//   - a search among them replays the one story recorded in
//     testdata/stories.tsv as the first to break that fix at full strength,
//     in its zone (with none recorded, or at another -rapid.seed or
//     -rapid.checks, it searches at full strength); the full suite fails
//     when the record is stale or missing, and -exercise.record writes it
//     anew;
//   - every other handler (a reference solution, a right fix, an
//     equivalent) is told quickStories stories of each search, here, in
//     UTC, and of the matrix only the columns its exercise names first or
//     adds: the quick suite asks whether the checks still accept it, the
//     full suite asks it of every story and every column.
//
// A story is the same in both (rapid draws story k from the seed and k),
// so the quick suite's replay is the full suite's verdict, at the cost of
// one story.

// recordFlagName is the flag that writes the stories anew.
const recordFlagName = "exercise.record"

var recordFlag = flag.Bool(recordFlagName, false, "with "+labtest.FullEnv+"=1, write the story that first breaks each wrong fix of the gallery to "+
	"checks/testdata/stories.tsv, for the quick suite to replay")

// storiesFile holds, for each search that rejects a wrong fix of the
// gallery, the first story that breaks it: test, search run, zone, story.
const storiesFile = "testdata/stories.tsv"

// full reports whether this process's searches run at full strength: a
// student's check, the full suite, or a process started for one share of
// a search.
func full() bool { return *exerciseFlag != "" || *redFlag || sharing() || labtest.FullSuite() }

// recordsApply reports whether the recorded stories are this run's: they
// were found at the default seed and budget (useLabDefaults), and story k
// of another seed, or a share of another budget's zones, is another story.
func recordsApply() bool {
	useLabDefaults()
	return rapidSeed() == "1" && storyBudget(100) == 100
}

// quickStories is how many stories the quick suite tells of a search of n
// stories (see storyBudget).
func quickStories(n int) int { return max(1, storyBudget(n)/20) }

// A storyRecord is where a search first broke: the zone and the story's
// number, 1 to the search's budget; the zero record says it held.
type storyRecord struct {
	zone  string
	story int
}

func (r storyRecord) String() string {
	if r.story == 0 {
		return "no story"
	}
	return fmt.Sprintf("story %d in time zone %s", r.story, r.zone)
}

// stories is the record read from storiesFile, by test name and search run,
// and, with -exercise.record, what this run found.
var stories struct {
	sync.Mutex
	once  sync.Once
	err   error
	byKey map[string]storyRecord
	found map[string]storyRecord // this run's, with -exercise.record
}

func storyKey(test, run string) string { return test + "\t" + run }

// loadStories reads storiesFile once.
func loadStories() error {
	stories.once.Do(func() {
		stories.byKey = map[string]storyRecord{}
		stories.found = map[string]storyRecord{}
		f, err := os.Open(storiesFile)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			stories.err = err
			return
		}
		defer f.Close()
		stories.byKey, stories.err = parseStories(f)
	})
	return stories.err
}

// parseStories reads a file of recorded stories (see writeStories).
func parseStories(r io.Reader) (map[string]storyRecord, error) {
	byKey := map[string]storyRecord{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		k, err := 0, error(nil)
		if len(fields) == 4 {
			k, err = strconv.Atoi(fields[3])
		}
		if len(fields) != 4 || err != nil || k < 1 || fields[2] == "" {
			return nil, fmt.Errorf("%s:%d: %q is not test, search, zone and story, tab-separated", storiesFile, n, line)
		}
		byKey[storyKey(fields[0], fields[1])] = storyRecord{fields[2], k}
	}
	return byKey, sc.Err()
}

// recordedStory returns the story recorded as the first to break run, a
// search of test.
func recordedStory(test, run string) (storyRecord, bool) {
	if err := loadStories(); err != nil {
		return storyRecord{}, false
	}
	stories.Lock()
	defer stories.Unlock()
	rec, ok := stories.byKey[storyKey(test, run)]
	return rec, ok
}

// checkRecord holds the record of run, a search of the gallery's test
// running c, to found, where it first broke at full strength (the zero
// record if it held): with -exercise.record it keeps found, else a record
// that differs is stale (see Stale), since the quick suite would replay a story
// that is not the one that breaks the fix.
func (c *Checker) checkRecord(run string, found storyRecord) {
	if err := loadStories(); err != nil {
		c.T.Errorf("reading the recorded stories: %v", err)
		return
	}
	key := storyKey(c.T.Name(), run)
	stories.Lock()
	defer stories.Unlock()
	if *recordFlag {
		stories.found[key] = found
		return
	}
	if rec := stories.byKey[key]; rec != found {
		c.stale = append(c.stale, fmt.Sprintf("%s first breaks this wrong fix at %v, and %s says %v:\n"+
			"the quick suite would replay the wrong story; record them again with\n  %s=1 go test ./checks -run '%s' -exercise.record",
			run, found, storiesFile, rec, labtest.FullEnv, runPattern(c.T.Name())))
	}
}

// writeStories writes storiesFile anew with what this run found, keeping
// the records of searches it did not run.
func writeStories() error {
	if err := loadStories(); err != nil {
		return err
	}
	stories.Lock()
	defer stories.Unlock()
	for key, rec := range stories.found {
		if rec.story == 0 {
			delete(stories.byKey, key)
		} else {
			stories.byKey[key] = rec
		}
	}
	var b strings.Builder
	b.WriteString("# The first story that breaks each wrong fix of the gallery a search rejects, at full strength\n" +
		"# (test, search run, time zone, story): the quick suite, go test ./..., replays it.\n" +
		"# Written by " + labtest.FullEnv + "=1 go test ./checks -exercise.record; do not edit.\n")
	for _, key := range slices.Sorted(maps.Keys(stories.byKey)) {
		rec := stories.byKey[key]
		fmt.Fprintf(&b, "%s\t%s\t%d\n", key, rec.zone, rec.story)
	}
	return os.WriteFile(storiesFile, []byte(b.String()), 0o644)
}

// AcceptedNote is what a gallery test adds when the check accepts a wrong
// fix: in the quick suite, where the fix may be rejected by a search whose
// breaking story was never recorded, how to record it.
func AcceptedNote(t interface{ Name() string }) string {
	if full() {
		return ""
	}
	return fmt.Sprintf(" in the quick suite,\nwhich tells a search's recorded story, or %d stories of it in UTC, "+
		"and runs only the guarantees\nexpected to reject it: if the full suite rejects it, record its story with\n"+
		"  %s=1 go test ./checks -run '%s' -exercise.record",
		quickStories(100), labtest.FullEnv, runPattern(t.Name()))
}

// TestReplayIsTheStoryFound holds the quick suite's replay to the full
// suite's search: the first story of KeySearch that breaks naive/sourceless,
// told again alone, breaks it again; told on correct/, it holds, and the
// replay says the record is stale rather than let a wrong fix through
// unremarked.
func TestReplayIsTheStoryFound(t *testing.T) {
	var broke int
	spec, v := keySearchOn(sourceless.Variant)
	c := &Checker{T: t, firstOnly: true}
	if c.scenario(spec.scenario(0, 20, &broke), v) || broke == 0 {
		t.Fatalf("KeySearch on naive/sourceless, stories 1 to 20: held (broke = %d), want a story that breaks it", broke)
	}
	rec := storyRecord{processZone(), broke}

	c = &Checker{T: t, firstOnly: true, gallery: true}
	if c.replay(spec, v, "KeySearch#1", rec) || len(c.Failures()) != 1 || len(c.Stale()) != 0 {
		t.Errorf("replay(KeySearch, naive/sourceless, %v) = %d failures, stale %q; want the failure, not stale", rec, len(c.Failures()), c.Stale())
	}

	spec, v = keySearchOn(correct.Variant)
	c = &Checker{T: t, firstOnly: true, gallery: true}
	if !c.replay(spec, v, "KeySearch#1", rec) || len(c.Failures()) != 0 || len(c.Stale()) != 1 ||
		!strings.Contains(c.Stale()[0], "holds now") || !strings.Contains(c.Stale()[0], "-exercise.record") {
		t.Errorf("replay(KeySearch, correct, %v) = %d failures, stale %q; want no failure and a stale record that says how to record it",
			rec, len(c.Failures()), c.Stale())
	}
}

// TestCheckRecordTellsStale holds the full suite to failing a gallery test
// whose recorded story is not the one its search first broke on, or that
// has none.
func TestCheckRecordTellsStale(t *testing.T) {
	if *recordFlag {
		t.Skip("-exercise.record: this test's own records would be written")
	}
	if err := loadStories(); err != nil {
		t.Fatal(err)
	}
	found := storyRecord{"Asia/Kathmandu", 7}
	for _, tc := range []struct {
		recorded  *storyRecord
		wantStale bool
	}{
		{nil, true},
		{&storyRecord{"Asia/Kathmandu", 8}, true},
		{&storyRecord{"UTC", 7}, true},
		{&found, false},
	} {
		key := storyKey(t.Name(), "PurgeSearch#1")
		stories.Lock()
		delete(stories.byKey, key)
		if tc.recorded != nil {
			stories.byKey[key] = *tc.recorded
		}
		stories.Unlock()
		c := &Checker{T: t, gallery: true}
		c.checkRecord("PurgeSearch#1", found)
		if got := len(c.Stale()) > 0; got != tc.wantStale {
			t.Errorf("checkRecord(found %v, recorded %v): stale = %v %q, want %v", found, tc.recorded, got, c.Stale(), tc.wantStale)
		}
	}
	stories.Lock()
	delete(stories.byKey, storyKey(t.Name(), "PurgeSearch#1"))
	stories.Unlock()
}

// TestParseStories holds the record's reader to refusing a line it cannot
// read whole, rather than replay a story it half read.
func TestParseStories(t *testing.T) {
	good := "# comment\n\nTestA/x\tKeySearch#1\tAsia/Tokyo\t17\n"
	got, err := parseStories(strings.NewReader(good))
	if want := (storyRecord{"Asia/Tokyo", 17}); err != nil || got[storyKey("TestA/x", "KeySearch#1")] != want || len(got) != 1 {
		t.Errorf("parseStories(%q) = %v, %v; want one record, %v", good, got, err, want)
	}
	for _, bad := range []string{
		"TestA\tKeySearch#1\tUTC\n",
		"TestA\tKeySearch#1\tUTC\tseventeen\n",
		"TestA\tKeySearch#1\tUTC\t0\n",
		"TestA\tKeySearch#1\t\t3\n",
		"TestA KeySearch#1 UTC 3\n",
	} {
		if _, err := parseStories(strings.NewReader(bad)); err == nil {
			t.Errorf("parseStories(%q) = nil error, want one that names the line", bad)
		}
	}
}
