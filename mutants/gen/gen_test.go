package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	// The mutants compile against lab: importing it here makes go test
	// run this test again, not answer from its cache, after lab changes.
	_ "idemlab/lab"
)

// TestMutationsFit generates every mutant from correct/ as it is now, which
// fails when a mutation's old text no longer occurs exactly once in its
// file, and builds them with go build, which type-checks each one. Nothing
// is written into the tree: the files reach go build through -overlay, at
// the paths gen writes (mutants/_generated, whose files on disk, if any, the
// overlay hides), so the go command's cache keeps the result from one run
// to the next. (go vet would not do: it runs in each package's directory,
// which a clean checkout does not have.)
func TestMutationsFit(t *testing.T) {
	src, err := sources(filepath.Join("..", correctDir))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := generate(src, mutations)
	if err != nil {
		t.Fatalf("the mutations no longer fit correct/: %v\nadapt mutants/gen/mutations.go to correct/ as it is now", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "mutants", outDir)
	tmp := t.TempDir()
	replace := map[string]string{}
	// Files on disk that gen would not write now are hidden.
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == out {
			return nil
		}
		if err == nil && !d.IsDir() {
			replace[p] = ""
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]bool{}
	for p, b := range gen {
		f := filepath.Join(tmp, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(out, p)] = f
		pkgs[importPath+"/"+filepath.ToSlash(filepath.Dir(p))] = true
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"build", "-overlay", overlayFile}, slices.Sorted(maps.Keys(pkgs))...)...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the mutants do not compile: go build: %v\n%s", err, b)
	}
}

// TestFailsLoudly checks that a mutation whose old text is not in correct/
// exactly once, that would not parse, or that names no file gen copies
// stops the generator.
func TestFailsLoudly(t *testing.T) {
	src, err := sources("../../correct")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []mutation{
		{name: "gone", file: "process.go", old: "no such text", new: "x", why: "w"},
		{name: "twice", file: "process.go", old: "return 0, err", new: "x", why: "w"},
		{name: "broken", file: "process.go", old: "if inserted == 1 {", new: "if inserted == 1 {{", why: "w"},
		{name: "all", file: "process.go", old: "if inserted == 1 {", new: "if inserted == 2 {", why: "w"},
		{name: "nofile", file: "nosuch.go", old: "package correct", new: "package x", why: "w"},
		{name: "variant", file: "variant.go", old: `"correct"`, new: `"x"`, why: "w"},
		{name: "doc", file: "doc.go", old: "package correct", new: "package x", why: "w"},
	} {
		if _, err := generate(src, []mutation{m}); err == nil {
			t.Errorf("generate(%s) succeeded, want an error", m.name)
		} else if !strings.Contains(err.Error(), "nothing written") {
			t.Errorf("generate(%s) = %v, want it to say nothing was written", m.name, err)
		}
	}
}

// TestWriteKeepsOthers checks that write replaces what gen wrote before and
// refuses, removing nothing, a directory that holds anything else.
func TestWriteKeepsOthers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), outDir)
	first := map[string][]byte{"old/doc.go": []byte(header + "package old\n"), "all/all.go": []byte(header + "package all\n")}
	if err := write(dir, first); err != nil {
		t.Fatal(err)
	}
	second := map[string][]byte{"new/doc.go": []byte(header + "package new\n"), "all/all.go": []byte(header + "package all\n")}
	if err := write(dir, second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "old")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after a second write, old is still there (%v)", err)
	}
	mine := filepath.Join(dir, "mine", "x.go")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("package mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(dir, first); err == nil {
		t.Errorf("write over a directory gen did not write succeeded")
	}
	for _, f := range []string{mine, filepath.Join(dir, "new", "doc.go")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a refused write removed %s: %v", f, err)
		}
	}
}
