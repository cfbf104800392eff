package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const regenerate = "go generate ./mutants"

// TestUpToDate regenerates the mutants from correct/ as it is now and
// compares them with mutants/ on disk: a change to correct/ (or to the
// table) without go generate fails here, with the command to run.
func TestUpToDate(t *testing.T) {
	gen, err := generate("../../correct", mutations)
	if err != nil {
		t.Fatalf("the mutations no longer fit correct/: %v\nadapt mutants/gen/mutations.go, then run %s", err, regenerate)
	}
	tmp := t.TempDir()
	if err := write(tmp, gen); err != nil {
		t.Fatal(err)
	}
	want := tree(t, tmp)
	dirs, err := owned("..")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, d := range dirs {
		for p, b := range tree(t, filepath.Join("..", d)) {
			got[filepath.Join(d, p)] = b
		}
	}
	var stale []string
	for p, b := range want {
		if g, ok := got[p]; !ok {
			stale = append(stale, "missing: mutants/"+p)
		} else if !bytes.Equal(g, b) {
			stale = append(stale, "differs: mutants/"+p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			stale = append(stale, "not generated: mutants/"+p)
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Errorf("mutants/ is stale against correct/ and mutants/gen/mutations.go; run\n\n\t%s\n\n%s", regenerate, strings.Join(stale, "\n"))
	}
	// A directory of mutants/ that gen does not own is a hand-made mutant.
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "gen" && !slices.Contains(dirs, e.Name()) {
			t.Errorf("mutants/%s was not written by mutants/gen: add its mutation to mutants/gen/mutations.go and run %s", e.Name(), regenerate)
		}
	}
}

// TestFailsLoudly checks that a mutation whose old text is not in correct/
// exactly once, or that would not parse, stops the generator.
func TestFailsLoudly(t *testing.T) {
	for _, m := range []mutation{
		{name: "gone", file: "process.go", old: "no such text", new: "x", why: "w"},
		{name: "twice", file: "process.go", old: "return 0, lab.Classify(err)", new: "x", why: "w"},
		{name: "broken", file: "process.go", old: "if inserted == 1 {", new: "if inserted == 1 {{", why: "w"},
		{name: "all", file: "process.go", old: "if inserted == 1 {", new: "if inserted == 2 {", why: "w"},
	} {
		if _, err := generate("../../correct", []mutation{m}); err == nil {
			t.Errorf("generate(%s) succeeded, want an error", m.name)
		} else if !strings.Contains(err.Error(), "nothing written") {
			t.Errorf("generate(%s) = %v, want it to say nothing was written", m.name, err)
		}
	}
}

// tree reads every file below dir, by its path below dir.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
