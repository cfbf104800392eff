package variants_test

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/diffs.md from the packages as they are")

// handlerDirs are the directories of the handlers a reader diffs against
// correct/: correct/ itself, the shared PostgreSQL helpers, and every naive
// and equivalent package. The exercises are left out on purpose: an
// exercise's package is the student's workspace, a whole handler to be
// edited in place, so it holds every file a fix may touch, copies
// included; a solution is that workspace finished.
func handlerDirs(t *testing.T) []string {
	t.Helper()
	dirs := []string{"../correct", "../postgres"}
	for _, parent := range []string{"../naive", "../equivalent"} {
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(parent, e.Name()))
			}
		}
	}
	return dirs
}

// packageClause is a file's package line, the one line two copies of a
// file in different packages must differ in.
var packageClause = regexp.MustCompile(`(?m)^package \w+\n`)

// sources returns the non-test Go files of dir, by name, without their
// package clause.
func sources(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = packageClause.ReplaceAllString(string(b), "")
	}
	return out
}

// TestNoCopies fails when two handler packages hold the same file (the
// same text but for the package clause). Code that is never the lesson
// lives once, in correct/ or in postgres/, and the packages that need it
// refer to it there; a copy is kept only where the mistake changes it.
func TestNoCopies(t *testing.T) {
	dirs := handlerDirs(t)
	if len(dirs) < 10 {
		t.Fatalf("handlerDirs() = %d directories, want correct/, postgres/ and every variant: run the test from variants/", len(dirs))
	}
	for _, p := range copies(t, dirs) {
		t.Error(p)
	}
}

// copies returns a line for each file of dirs that repeats an earlier one.
func copies(t *testing.T, dirs []string) []string {
	t.Helper()
	var problems []string
	seen := map[string]string{} // file text -> path of its first holder
	for _, dir := range dirs {
		files := sources(t, dir)
		for _, name := range slices.Sorted(maps.Keys(files)) {
			path := filepath.ToSlash(filepath.Join(strings.TrimPrefix(dir, "../"), name))
			if first, ok := seen[files[name]]; ok {
				problems = append(problems, fmt.Sprintf("%s is a copy of %s: refer to %s's code instead of copying it, or make the copy the lesson", path, first, filepath.Dir(first)))
				continue
			}
			seen[files[name]] = path
		}
	}
	return problems
}

// TestCopiesFindsACopy holds copies to the copies it must find: a file
// repeated under another package clause, and not a file that differs in
// one character or one that merely shares a name.
func TestCopiesFindsACopy(t *testing.T) {
	root := t.TempDir()
	write := func(dir, name, text string) string {
		d := filepath.Join(root, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	body := "\nconst Schema = `CREATE TABLE inbox (id INTEGER PRIMARY KEY)`\n"
	a := write("a", "schema.go", "package a\n"+body)
	b := write("b", "schema.go", "package b\n"+body)
	c := write("c", "schema.go", "package c\n"+strings.Replace(body, "id", "ID", 1))
	write("c", "schema_test.go", "package c\n"+body) // tests are not handler code
	if got := copies(t, []string{a, b}); len(got) != 1 || !strings.Contains(got[0], "schema.go is a copy of") {
		t.Errorf("copies(a, b with a's schema.go) = %q, want one copy", got)
	}
	if got := copies(t, []string{a, c}); len(got) != 0 {
		t.Errorf("copies(a, c with another schema.go) = %q, want none", got)
	}
}

// TestDiffTable keeps docs/diffs.md, the table of lines each naive and
// equivalent variant changes against correct/, in step with the packages:
// a reader checks there that every variant's diff is its mistake and
// nothing else. go test ./variants -update rewrites it.
func TestDiffTable(t *testing.T) {
	got := diffTable(t)
	const path = "../docs/diffs.md"
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test ./variants -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/diffs.md is not the table of the packages as they are: run go test ./variants -update and read the change\n%s", got)
	}
}

// diffTable renders docs/diffs.md.
func diffTable(t *testing.T) []byte {
	t.Helper()
	correct := sources(t, "../correct")
	correct["retry.go"] = sources(t, "../postgres")["retry.go"]
	var b strings.Builder
	b.WriteString("# What each variant changes\n\n")
	b.WriteString("Every naive variant is `correct/` with one mistake, and every equivalent one is `correct/`\n")
	b.WriteString("written another way. A variant package holds only the files its mistake changes, beside its\n")
	b.WriteString("`doc.go` and `variant.go`; it takes the rest from `correct/` (`correct.Schema`, `correct.DSN`,\n")
	b.WriteString("`correct.PostgresSchema`) and from `postgres/` (`postgres.DSN`, `postgres.Retry`). The table\n")
	b.WriteString("counts the lines each file changes against the file of the same name in `correct/` (for\n")
	b.WriteString("`retry.go`, `postgres/retry.go`), leaving out the package clause. In `variant.go`, the lines\n")
	b.WriteString("that name the variant (`Name`, `Mistake`) or take a part from `correct/` are counted apart: the\n")
	b.WriteString("rest, if any, is the mistake showing in how the variant is assembled.\n\n")
	b.WriteString("Generated by `go test ./variants -update`; `go test ./variants` fails when it is stale.\n")
	b.WriteString("See a diff with `go run ./cmd/lab diff VARIANT`.\n\n")
	b.WriteString("| variant | variant.go: naming, from correct, other | files of the mistake (−removed +added) |\n")
	b.WriteString("|---|---|---|\n")
	for _, parent := range []string{"naive", "equivalent"} {
		entries, err := os.ReadDir("../" + parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			files := sources(t, filepath.Join("..", parent, e.Name()))
			removed, added := lineDiff(correct["variant.go"], files["variant.go"])
			naming, fromCorrect, other := 0, 0, 0
			for _, l := range slices.Concat(removed, added) {
				switch {
				case regexp.MustCompile(`^\s*(Name|Mistake):`).MatchString(l):
					naming++
				case strings.Contains(l, "correct.") || strings.Contains(l, `"idemlab/correct"`) || regexp.MustCompile(`^\s*(Schema|DSN):\s+(Schema|DSN|PostgresSchema),$`).MatchString(l):
					fromCorrect++
				default:
					other++
				}
			}
			var lesson []string
			for _, name := range slices.Sorted(maps.Keys(files)) {
				if name == "doc.go" || name == "variant.go" {
					continue
				}
				base, ok := correct[name]
				if !ok {
					lesson = append(lesson, fmt.Sprintf("`%s` new, %d lines", name, strings.Count(files[name], "\n")))
					continue
				}
				r, a := lineDiff(base, files[name])
				lesson = append(lesson, fmt.Sprintf("`%s` −%d +%d", name, len(r), len(a)))
			}
			if len(lesson) == 0 {
				lesson = []string{"none"}
			}
			fmt.Fprintf(&b, "| %s/%s | %d, %d, %d | %s |\n", parent, e.Name(), naming, fromCorrect, other, strings.Join(lesson, " · "))
		}
	}
	return []byte(b.String())
}

// lineDiff returns the lines of a that b removes and the lines b adds, by
// a longest common subsequence of lines (files here are a few hundred
// lines: the quadratic table is small).
func lineDiff(a, b string) (removed, added []string) {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if b == "" {
		y = nil
	}
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i++
			j++
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			added = append(added, y[j])
			j++
		default:
			removed = append(removed, x[i])
			i++
		}
	}
	return removed, added
}

func TestLineDiff(t *testing.T) {
	for _, c := range []struct {
		a, b           string
		removed, added []string
	}{
		{"x\ny\nz", "x\ny\nz", nil, nil},
		{"x\ny\nz", "x\nz", []string{"y"}, nil},
		{"x\nz", "x\ny\nz", nil, []string{"y"}},
		{"x\ny\nz", "x\nY\nz", []string{"y"}, []string{"Y"}},
		{"a\nb", "", []string{"a", "b"}, nil},
	} {
		r, a := lineDiff(c.a, c.b)
		if !slices.Equal(r, c.removed) || !slices.Equal(a, c.added) {
			t.Errorf("lineDiff(%q, %q) = %q, %q, want %q, %q", c.a, c.b, r, a, c.removed, c.added)
		}
	}
}
