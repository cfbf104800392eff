package scenarios_test

import (
	"database/sql"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/naive/markfirst"
	"idemlab/scenarios"
	"idemlab/variants"
)

// TestRegistry checks what adding a variant asks of its author and what no
// compiler checks: that the registry names each variant by its package
// path, that each naive package documents its mistake in a BUG(lab) note
// naming the scenarios that catch it, that the golden matrix agrees with
// that note, that a variant without a PostgreSQL form says in its package
// doc why, and that the README counts the naive variants right.
func TestRegistry(t *testing.T) {
	golden, err := readGolden()
	if err != nil {
		t.Fatalf("reading the golden matrix: %v", err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range registryProblems(variants.All, "..", string(readme), golden) {
		t.Error(problem)
	}
}

// TestRegistryCatchesMistakes holds registryProblems to the mistakes it
// exists for: each broken registry below must be reported.
func TestRegistryCatchesMistakes(t *testing.T) {
	golden, err := readGolden()
	if err != nil {
		t.Fatalf("reading the golden matrix: %v", err)
	}
	readmeBytes, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(readmeBytes)

	misnamed := markfirst.Variant
	misnamed.Name = "naive/swallow"
	noMistake := markfirst.Variant
	noMistake.Mistake = ""
	noPostgres := markfirst.Variant
	noPostgres.Postgres = nil
	// A package whose doc has no BUG note: a temporary copy of correct's
	// doc under a naive name.
	root := t.TempDir()
	writePackage(t, filepath.Join(root, "naive", "markfirst"), "// Package markfirst is a copy.\npackage markfirst\n")
	// A BUG note that names a scenario the variant passes, and one that
	// names no scenario at all.
	rootWrongCatch := t.TempDir()
	writePackage(t, filepath.Join(rootWrongCatch, "naive", "markfirst"),
		"// Package markfirst is a copy.\npackage markfirst\n\n// BUG(lab): marks first. Caught by Duplicate.\n")
	rootNoCatch := t.TempDir()
	writePackage(t, filepath.Join(rootNoCatch, "naive", "markfirst"),
		"// Package markfirst is a copy.\npackage markfirst\n\n// BUG(lab): marks first, and nothing says what catches it.\n")

	for _, tc := range []struct {
		name     string
		registry []lab.Variant
		root     string
		readme   string
		want     string
	}{
		{"a name that is not the package path", []lab.Variant{correct.Variant, misnamed}, "..", readme, "package idemlab/naive/markfirst"},
		{"a naive variant without its mistake", []lab.Variant{correct.Variant, noMistake}, "..", readme, "no Mistake"},
		{"a package without a BUG note", []lab.Variant{correct.Variant, markfirst.Variant}, root, readme, "no BUG(lab) note"},
		{"a note naming a scenario the variant passes", []lab.Variant{correct.Variant, markfirst.Variant}, rootWrongCatch, readme, "passes Duplicate"},
		{"a note naming no scenario", []lab.Variant{correct.Variant, markfirst.Variant}, rootNoCatch, readme, "Caught by"},
		{"a README that miscounts", variants.All, "..", strings.Replace(readme, "fourteen in the SQLite matrix", "thirteen in the SQLite matrix", 1), "README"},
		{"no PostgreSQL form, and no word why", []lab.Variant{correct.Variant, noPostgres}, root, readme, "no PostgreSQL form"},
		{"a variant registered twice", append(slices.Clone(variants.All), markfirst.Variant), "..", readme, "twice"},
		{"a variant without a constructor", []lab.Variant{correct.Variant, {Name: "naive/markfirst", Mistake: "x", Schema: markfirst.Variant.Schema, DSN: markfirst.Variant.DSN}}, "..", readme, "no New"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems := registryProblems(tc.registry, tc.root, tc.readme, golden)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("registryProblems(%s) = %q, want a problem mentioning %q", tc.name, problems, tc.want)
			}
		})
	}
}

func writePackage(t *testing.T, dir, docGo string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(docGo), 0o644); err != nil {
		t.Fatal(err)
	}
}

// caughtBy finds the scenarios a BUG note says catch the mistake:
// "Caught by Race and Concurrent." or "Caught by FaultSweep, Crash and Race."
var caughtBy = regexp.MustCompile(`Caught by\s+([A-Z]\w*(?:(?:,\s+|\s+and\s+)[A-Z]\w*)*)`)

// numberWords spells the count of naive variants the way the README does.
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
	"nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
	"eighteen", "nineteen", "twenty", "twenty-one", "twenty-two", "twenty-three", "twenty-four",
	"twenty-five"}

// registryProblems returns every way in which registry disagrees with the
// packages under root, the golden matrix and the README.
func registryProblems(registry []lab.Variant, root, readme string, golden map[string]map[string]string) []string {
	var problems []string
	seen := map[string]bool{}
	naive := 0
	for _, v := range registry {
		if seen[v.Name] {
			problems = append(problems, fmt.Sprintf("%s is registered twice", v.Name))
		}
		seen[v.Name] = true
		if v.New == nil || v.DSN == nil || v.Schema == "" {
			problems = append(problems, fmt.Sprintf("%s has no New, DSN or Schema", v.Name))
			continue
		}
		if pkg := packageOf(v.New); pkg != "idemlab/"+v.Name {
			problems = append(problems, fmt.Sprintf("variant named %q is defined in package %s: Name must be its package path", v.Name, pkg))
		}
		if v.Postgres == nil {
			_, text, err := packageDoc(filepath.Join(root, filepath.FromSlash(v.Name)))
			if err == nil && !strings.Contains(text, "PostgreSQL") {
				problems = append(problems, fmt.Sprintf("%s has no PostgreSQL form, and its package doc says nowhere why: "+
					"say what its mistake is on PostgreSQL, or that it has no analogue there", v.Name))
			}
		}
		if v.Correct() {
			if v.Name != "correct" && !strings.HasPrefix(v.Name, "equivalent/") {
				problems = append(problems, fmt.Sprintf("%s has no Mistake: only correct and equivalent/ handlers may have none", v.Name))
			}
			continue
		}
		naive++
		notes, _, err := packageDoc(filepath.Join(root, filepath.FromSlash(v.Name)))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", v.Name, err))
			continue
		}
		if len(notes) == 0 {
			problems = append(problems, fmt.Sprintf("%s has no BUG(lab) note in its package doc: say what the mistake is and what catches it", v.Name))
			continue
		}
		m := caughtBy.FindStringSubmatch(strings.Join(notes, " "))
		if m == nil {
			problems = append(problems, fmt.Sprintf("%s: its BUG(lab) note says nowhere \"Caught by <Scenario>.\"", v.Name))
			continue
		}
		for _, name := range regexp.MustCompile(`,\s+|\s+and\s+`).Split(m[1], -1) {
			if !slices.ContainsFunc(scenarios.All, func(s labtest.Scenario) bool { return s.Name == name }) {
				problems = append(problems, fmt.Sprintf("%s: its BUG(lab) note says it is caught by %s, which is no scenario", v.Name, name))
				continue
			}
			if mark, ok := golden[v.Name][name]; !ok || mark != report.Fail {
				says := "passes"
				if mark == report.Neutral {
					says = "could not judge it in"
				}
				problems = append(problems, fmt.Sprintf("%s: its BUG(lab) note says it is caught by %s, but the golden matrix says it %s %s", v.Name, name, says, name))
			}
		}
	}
	if naive < len(numberWords) {
		want := numberWords[naive] + " in the SQLite matrix"
		if !strings.Contains(strings.Join(strings.Fields(readme), " "), want) {
			problems = append(problems, fmt.Sprintf("README does not say %q: there are %d naive variants", want, naive))
		}
	}
	return problems
}

// packageOf returns the import path of the package that defines f, from
// the name the runtime gives its code: "idemlab/naive/markfirst.init.func1".
func packageOf(f func(*sql.DB) lab.Processor) string {
	name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	slash := strings.LastIndex(name, "/")
	dot := strings.Index(name[slash+1:], ".")
	if dot < 0 {
		return name
	}
	return name[:slash+1+dot]
}

// packageDoc returns the BUG(lab) notes of the package in dir, and its
// package doc.
func packageDoc(dir string) ([]string, string, error) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, "", err
	}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, "", err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("no Go files in %s", dir)
	}
	pkg, err := doc.NewFromFiles(fset, files, "idemlab/"+filepath.ToSlash(dir))
	if err != nil {
		return nil, "", err
	}
	var notes []string
	for _, n := range pkg.Notes["BUG"] {
		notes = append(notes, n.Body)
	}
	return notes, pkg.Doc, nil
}
