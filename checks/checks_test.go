package checks

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"idemlab/lab/labtest"
)

// TestMain stops, with one line that lists the exercises, when -exercise
// names none of them. With -exercise or -exercise.red, and no -run of the
// command line's own, it runs TestExercise alone: the student asked for
// the check, not for the reference solutions and the gallery. With
// -exercise.zone, or in the quick suite (UTC), it makes that zone the
// process's, before any test runs (see zones_test.go). With
// -exercise.record it writes the stories the gallery's searches first
// broke on (see stories_test.go).
func TestMain(m *testing.M) {
	flag.Parse()
	if _, err := selected(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *recordFlag && !labtest.FullSuite() {
		fmt.Fprintf(os.Stderr, "-%s records what the full suite finds: run it as %s=1 go test ./checks -%s\n",
			recordFlagName, labtest.FullEnv, recordFlagName)
		os.Exit(2)
	}
	if *zoneFlag != "" || !full() {
		if err := useZone(processZone()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.run" })
	if (*exerciseFlag != "" || *redFlag) && !set {
		flag.Set("test.run", "^TestExercise$")
	}
	code := m.Run()
	if *recordFlag {
		if err := writeStories(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestExercise checks what the command line asks: the exercise -exercise
// names, whose test fails until the work is done; with -exercise.red,
// that every starting point (or the named one) still fails its check. It
// skips without either, so that go test ./... stays green whatever state
// the exercises are in.
func TestExercise(t *testing.T) {
	exercises, err := selected()
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case *redFlag:
		for _, e := range exercises {
			t.Run(e.Name, func(t *testing.T) {
				t.Parallel()
				e.CheckRed(t)
			})
		}
	case len(exercises) == 1:
		exercises[0].Check(t)
	default:
		var names []string
		for _, e := range Exercises {
			names = append(names, e.Name)
		}
		t.Skipf("no exercise checked: go test ./checks -exercise=NAME, NAME one of %s", strings.Join(names, ", "))
	}
}

// TestFind requires an unknown exercise's error to be one line that names
// it and lists every exercise.
func TestFind(t *testing.T) {
	if e, err := Find("sourcescope"); err != nil || e.Name != "sourcescope" {
		t.Errorf("Find(sourcescope) = %q, %v, want the exercise", e.Name, err)
	}
	_, err := Find("nosuch")
	if err == nil {
		t.Fatal("Find(nosuch) error = nil, want an unknown exercise")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, `"nosuch"`) {
		t.Errorf("Find(nosuch) error = %q, want one line naming nosuch", msg)
	}
	for _, e := range Exercises {
		if !strings.Contains(msg, e.Name) {
			t.Errorf("Find(nosuch) error = %q, want it to list %s", msg, e.Name)
		}
	}
}

// TestExercisesAreThePackages requires Exercises to name every package of
// ../exercises, once: an exercise left out would never be checked.
func TestExercisesAreThePackages(t *testing.T) {
	dirs, err := os.ReadDir("../exercises")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range dirs {
		if d.IsDir() {
			want = append(want, d.Name())
		}
	}
	var got []string
	for _, e := range Exercises {
		got = append(got, e.Name)
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("Exercises = %v, want the directories of ../exercises, %v", got, want)
	}
}
