package scenarios_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// claim is one entry of CLAIMS.md.
type claim struct {
	// scenarios are the names in backticks without a slash on the first
	// line of its Shown by paragraph.
	scenarios []string
	// continued are the names in backticks without a slash on the
	// paragraph's later lines.
	continued []string
	// variants are the names in backticks with a slash, anywhere in the
	// paragraph.
	variants []string
	shown    bool // it has a Shown by paragraph
	stated   bool // it has a Stated only paragraph
}

var (
	claimHeading = regexp.MustCompile(`^### (C\d+)\. `)
	backticked   = regexp.MustCompile("`([^`]+)`")
	claimCite    = regexp.MustCompile(`\bC\d+\b`)
	// exerciseRef is "exercise 4 (exercises/checkthenact)" or "exercises
	// 1, 2 and 3 (exercises/a, exercises/b, exercises/c)".
	exerciseRef  = regexp.MustCompile(`\b[Ee]xercises? (\d+(?:(?:, | and )\d+)*)(?: \(([^)]*)\))?`)
	exerciseList = regexp.MustCompile(`, | and `)
	exerciseDir  = regexp.MustCompile(`\bexercises/\w+`)
	testRef      = regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark)[A-Z]\w*`)
	packageRef   = regexp.MustCompile(`\(package (\w+)\)`) // "(package fleet)"
	// pathRef is a slash-separated path, "./" allowed in front; only those
	// whose first element is a directory of the repository are paths.
	pathRef         = regexp.MustCompile(`(?:\./)?([a-z][\w-]*(?:/[\w.-]*\w)+)`)
	exerciseHeading = regexp.MustCompile(`(?m)^## (\d+)\. `)
	testFunc        = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w*)\(`)
)

const claimsDocument = "../CLAIMS.md"

// parseClaims reads CLAIMS.md: every "### Cn. title" heading and the
// paragraph under it that starts "Shown by:" or "Stated only:", up to the
// next empty line.
func parseClaims(text string) (map[string]*claim, error) {
	claims := map[string]*claim{}
	var c *claim    // the entry whose paragraph is still to come, or being read
	inPara := false // reading that paragraph, after its first line
	for i, line := range strings.Split(text, "\n") {
		if m := claimHeading.FindStringSubmatch(line); m != nil {
			if claims[m[1]] != nil {
				return nil, fmt.Errorf("line %d: %s is defined twice", i+1, m[1])
			}
			c, inPara = &claim{}, false
			claims[m[1]] = c
			continue
		}
		if c == nil {
			continue
		}
		names := backticked.FindAllStringSubmatch(line, -1)
		switch {
		case strings.HasPrefix(line, "## "), inPara && strings.TrimSpace(line) == "":
			c, inPara = nil, false
		case inPara:
			for _, m := range names {
				if strings.Contains(m[1], "/") {
					c.variants = append(c.variants, m[1])
				} else {
					c.continued = append(c.continued, m[1])
				}
			}
		case strings.HasPrefix(line, "Shown by:"), strings.HasPrefix(line, "Stated only:"):
			c.shown = strings.HasPrefix(line, "Shown by:")
			c.stated = !c.shown
			inPara = true
			for _, m := range names {
				if strings.Contains(m[1], "/") {
					c.variants = append(c.variants, m[1])
				} else if c.shown {
					c.scenarios = append(c.scenarios, m[1])
				}
			}
		}
	}
	for n, c := range claims {
		if !c.shown && !c.stated {
			return nil, fmt.Errorf("%s has neither a Shown by nor a Stated only line", n)
		}
	}
	return claims, nil
}

// claimsWorld is what CLAIMS.md is held to.
type claimsWorld struct {
	// scenarios are every backend's scenarios; a name may come more than
	// once, with other Claims (PostgreSQL's LockTimeout cites C25 too).
	scenarios []labtest.Scenario
	// registry names every variant: the matrix's rows, the equivalents,
	// and the rows of PostgreSQL and MariaDB only.
	registry []string
	// verdicts are each variant's marks in each scenario, from every
	// golden matrix (SQLite, and each level of PostgreSQL and MariaDB).
	verdicts map[string]map[string][]string
	// docs are the registered variants' package docs.
	docs map[string]string
	// exercises are EXERCISES.md's sections by number.
	exercises map[int]string
	// tests are the repository's Test, Fuzz and Benchmark functions, and
	// packages the base names of its directories.
	tests, packages map[string]bool
	// exists says whether a path relative to the repository's root exists.
	exists func(string) bool
}

// claimsProblems returns every way in which the claims document disagrees
// with the kit: with the scenarios' Claims fields, the registry, the golden
// verdicts, the variants' docs, the exercises, and the tests and files it
// names.
func claimsProblems(doc string, w *claimsWorld) []string {
	claims, err := parseClaims(doc)
	if err != nil {
		return []string{"parseClaims(CLAIMS.md): " + err.Error()}
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	cites := map[string][]string{} // claim → scenarios whose Claims field cites it, on any backend
	known := map[string]bool{}     // every scenario's name
	for _, sc := range w.scenarios {
		known[sc.Name] = true
		if sc.Claims == "all" {
			continue
		}
		for _, n := range claimCite.FindAllString(sc.Claims, -1) {
			if slices.Contains(cites[n], sc.Name) {
				continue
			}
			cites[n] = append(cites[n], sc.Name)
			c := claims[n]
			switch {
			case c == nil:
				add("scenario %s cites %s, which CLAIMS.md does not define", sc.Name, n)
			case c.stated:
				add("%s is Stated only, but scenario %s demonstrates it (its Claims field cites %s): make it Shown by, naming %s", n, sc.Name, n, sc.Name)
			case slices.Contains(c.scenarios, sc.Name):
			case slices.Contains(c.continued, sc.Name):
				add("scenario %s cites %s, but CLAIMS.md names it only on a continuation line of %s's Shown by paragraph: name it on the Shown by line", sc.Name, n, n)
			default:
				add("scenario %s cites %s, but CLAIMS.md's Shown by line for %s does not name it", sc.Name, n, n)
			}
		}
	}
	for n, c := range claims {
		for _, name := range c.scenarios {
			if !slices.Contains(cites[n], name) {
				add("CLAIMS.md says %s is shown by scenario %s, whose Claims field does not cite it", n, name)
			}
		}
		for _, name := range c.continued {
			if known[name] && !slices.Contains(c.scenarios, name) && !slices.Contains(cites[n], name) {
				add("CLAIMS.md names scenario %s under %s only on a continuation line of its Shown by paragraph: a scenario that shows a claim is named on the Shown by line, and cites the claim", name, n)
			}
		}
		for _, v := range c.variants {
			if !slices.Contains(w.registry, v) {
				add("CLAIMS.md names %s under %s, which is no registered variant", v, n)
				continue
			}
			problems = append(problems, variantProblems(n, c, v, w)...)
		}
	}
	for _, v := range w.registry {
		for _, n := range uniqueCites(w.docs[v]) {
			switch c := claims[n]; {
			case c == nil:
			case c.stated:
				add("%s is Stated only, but %s's package doc cites it: the variant demonstrates it, so make it Shown by, naming %s", n, v, v)
			case !slices.Contains(c.variants, v):
				add("%s's package doc cites %s, but CLAIMS.md's paragraph for %s does not name it", v, n, n)
			}
		}
	}
	problems = append(problems, referenceProblems(doc, w)...)
	slices.Sort(problems)
	return problems
}

// variantProblems holds variant v, named under claim n, to the golden
// verdicts: a naive variant shows a claim by breaking it, so it must fail
// at least one of the claim's scenarios; an equivalent shows it by holding
// where a naive one breaks, so it must hold every one of them.
func variantProblems(n string, c *claim, v string, w *claimsWorld) []string {
	if len(c.scenarios) == 0 {
		return []string{fmt.Sprintf("CLAIMS.md names %s under %s, which names no scenario for it to be judged by", v, n)}
	}
	var failed, judged []string
	for _, s := range c.scenarios {
		marks := w.verdicts[v][s]
		if len(marks) > 0 {
			judged = append(judged, s)
		}
		if slices.Contains(marks, report.Fail) {
			failed = append(failed, s)
		}
	}
	switch {
	case len(judged) == 0:
		return []string{fmt.Sprintf("CLAIMS.md names %s under %s, but no golden matrix has a verdict of it in %s", v, n, strings.Join(c.scenarios, ", "))}
	case strings.HasPrefix(v, "equivalent/") && len(failed) > 0:
		return []string{fmt.Sprintf("CLAIMS.md names %s under %s, an equivalent, which breaks %s: an equivalent shows a claim by holding", v, n, strings.Join(failed, ", "))}
	case strings.HasPrefix(v, "naive/") && len(failed) == 0:
		return []string{fmt.Sprintf("CLAIMS.md names %s under %s, which fails none of %s's scenarios (%s) in any golden matrix", v, n, n, strings.Join(c.scenarios, ", "))}
	}
	return nil
}

// referenceProblems returns every exercise, test, package and file that
// doc names and the kit does not have.
func referenceProblems(doc string, w *claimsWorld) []string {
	var problems []string
	for _, m := range exerciseRef.FindAllStringSubmatch(doc, -1) {
		numbers := exerciseList.Split(m[1], -1)
		dirs := exerciseDir.FindAllString(m[2], -1)
		for i, s := range numbers {
			k, _ := strconv.Atoi(s)
			section, ok := w.exercises[k]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("CLAIMS.md names exercise %d, which EXERCISES.md does not have", k))
			case len(dirs) == len(numbers) && !strings.Contains(section, dirs[i]):
				problems = append(problems, fmt.Sprintf("CLAIMS.md names exercise %d as %s, which EXERCISES.md's exercise %d does not mention", k, dirs[i], k))
			}
		}
	}
	for _, name := range testRef.FindAllString(doc, -1) {
		if !w.tests[name] {
			problems = append(problems, fmt.Sprintf("CLAIMS.md names %s, which is no test function of the repository", name))
		}
	}
	for _, m := range packageRef.FindAllStringSubmatch(doc, -1) {
		if !w.packages[m[1]] {
			problems = append(problems, fmt.Sprintf("CLAIMS.md names package %s, which the repository does not have", m[1]))
		}
	}
	seen := map[string]bool{}
	for _, m := range pathRef.FindAllStringSubmatch(doc, -1) {
		path := m[1]
		first, _, _ := strings.Cut(path, "/")
		if seen[path] || !w.exists(first) {
			continue
		}
		seen[path] = true
		if !w.exists(path) {
			problems = append(problems, fmt.Sprintf("CLAIMS.md names %s, which the repository does not have", path))
		}
	}
	return problems
}

// uniqueCites returns the claims text cites, each once.
func uniqueCites(text string) []string {
	var cites []string
	for _, n := range claimCite.FindAllString(text, -1) {
		if !slices.Contains(cites, n) {
			cites = append(cites, n)
		}
	}
	return cites
}

// newClaimsWorld reads the kit as it is, from the repository at root.
func newClaimsWorld(t *testing.T, root string) *claimsWorld {
	t.Helper()
	w := &claimsWorld{
		verdicts:  map[string]map[string][]string{},
		docs:      map[string]string{},
		exercises: map[int]string{},
		tests:     map[string]bool{},
		packages:  map[string]bool{},
		exists: func(p string) bool {
			_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
			return err == nil
		},
	}
	w.scenarios = slices.Concat(scenarios.All, scenarios.Postgres, scenarios.MariaDB)
	for _, v := range slices.Concat(variants.All, variants.Equivalents, variants.PostgresOnly, variants.MariaDBOnly) {
		if slices.Contains(w.registry, v.Name) {
			continue
		}
		w.registry = append(w.registry, v.Name)
		if data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(v.Name), "doc.go")); err == nil {
			w.docs[v.Name] = string(data)
		}
	}

	goldens, err := filepath.Glob("testdata/*.golden")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden matrices (%v)", err)
	}
	for _, path := range goldens {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := report.ParseReport(string(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, v := range rep.Variants {
			if w.verdicts[v.Name] == nil {
				w.verdicts[v.Name] = map[string][]string{}
			}
			for _, s := range rep.Scenarios {
				if c := rep.Cell(v.Name, s.Name); c != nil {
					w.verdicts[v.Name][s.Name] = append(w.verdicts[v.Name][s.Name], c.Mark())
				}
			}
		}
	}

	exercises, err := os.ReadFile(filepath.Join(root, "EXERCISES.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(exercises)
	heads := exerciseHeading.FindAllStringSubmatchIndex(text, -1)
	for i, h := range heads {
		end := len(text)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		if rest := strings.Index(text[h[1]:end], "\n## "); rest >= 0 {
			end = h[1] + rest
		}
		k, _ := strconv.Atoi(text[h[2]:h[3]])
		w.exercises[k] = text[h[0]:end]
	}

	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			w.packages[d.Name()] = true
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(data), -1) {
			w.tests[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestClaims keeps CLAIMS.md and the kit in agreement, and makes every
// C-number cited anywhere in the repository resolve to an entry of it.
func TestClaims(t *testing.T) {
	text, err := os.ReadFile(claimsDocument)
	if err != nil {
		t.Fatal(err)
	}
	w := newClaimsWorld(t, "..")
	for _, p := range claimsProblems(string(text), w) {
		t.Error(p)
	}
	claims, err := parseClaims(string(text))
	if err != nil {
		t.Fatalf("parseClaims(CLAIMS.md): %v", err)
	}

	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range claimCite.FindAllString(string(data), -1) {
			if claims[n] == nil {
				t.Errorf("%s cites %s, which CLAIMS.md does not define", path, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestClaimsCatchesDrift holds claimsProblems to the drifts it exists for:
// each edit of the document or of the kit below must be reported.
func TestClaimsCatchesDrift(t *testing.T) {
	data, err := os.ReadFile(claimsDocument)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	base := newClaimsWorld(t, "..")
	if p := claimsProblems(text, base); len(p) > 0 {
		t.Fatalf("claimsProblems(CLAIMS.md as it is) = %q, want none", p)
	}
	race := slices.IndexFunc(base.scenarios, func(s labtest.Scenario) bool { return s.Name == "Race" })
	// replace edits the document, and fails the case when the text it
	// edits is no longer there: a case that edits nothing proves nothing.
	replace := func(t *testing.T, doc, old, new string) string {
		t.Helper()
		if !strings.Contains(doc, old) {
			t.Fatalf("CLAIMS.md no longer holds %q", old)
		}
		return strings.Replace(doc, old, new, 1)
	}

	for _, tc := range []struct {
		name   string
		edit   func(t *testing.T, doc string, w *claimsWorld) string
		expect string
	}{
		{"a scenario cites a claim the document lacks", func(t *testing.T, doc string, w *claimsWorld) string {
			w.scenarios[race].Claims += ", C" + "99" // spelled in two so that this file cites no missing claim
			return doc
		}, "C" + "99"},
		{"a scenario cites a claim whose line does not name it", func(t *testing.T, doc string, w *claimsWorld) string {
			w.scenarios[race].Claims += ", C7"
			return doc
		}, "scenario Race cites C7"},
		{"the document names a scenario that does not cite the claim", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "Shown by: scenario `SourceScope`", "Shown by: scenarios `SourceScope`, `Duplicate`")
		}, "shown by scenario Duplicate"},
		{"the document names a variant that does not exist", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "`naive/sourceless`", "`naive/keyless`")
		}, "naive/keyless"},
		{"a named variant that fails none of its named scenarios", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "Shown by: scenarios `LockTimeout`, `CommitWait`, `Race`, `Concurrent`, `ConflictLockTimeout`;\n`naive/deferred`",
				"Shown by: scenarios `LockTimeout`, `CommitWait`, `ConflictLockTimeout`;\n`naive/deferred`")
		}, "naive/deferred under C14, which fails none"},
		{"a named equivalent that breaks a named scenario", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "Shown by: scenario `BusinessKey`;", "Shown by: scenario `BusinessKey`; `equivalent/plainbegin`;")
		}, "equivalent/plainbegin under C20, an equivalent, which breaks BusinessKey"},
		{"a named exercise that does not exist", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "exercise 10 (exercises/memory)", "exercise 13 (exercises/memory)")
		}, "exercise 13, which EXERCISES.md does not have"},
		{"a named exercise under another's number", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "exercise 5 (exercises/markfirst)", "exercise 4 (exercises/markfirst)")
		}, "exercise 4 as exercises/markfirst"},
		{"a named test that does not exist", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "TestCrashIsAKill", "TestCrashIsAKil")
		}, "TestCrashIsAKil,"},
		{"a named file that does not exist", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "solutions/replay", "solutions/replays")
		}, "solutions/replays"},
		{"a named package that does not exist", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "package fleet", "package fleets")
		}, "package fleets"},
		{"a scenario named only on a continuation line", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "Shown by: scenario `SourceScope`; `naive/sourceless`;",
				"Shown by: `naive/sourceless`;\nand scenario `SourceScope`;")
		}, "only on a continuation line"},
		{"a Stated only claim that a scenario demonstrates", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "Shown by: scenarios `Race`, `Concurrent`; `equivalent/plainbegin`, `naive/deferred`",
				"Stated only: measured once, not a scenario.")
		}, "C32 is Stated only, but scenario Race demonstrates it"},
		{"a Stated only claim that a variant's doc demonstrates", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "Shown by: scenarios `Race`, `Concurrent`; `equivalent/plainbegin`, `naive/deferred`",
				"Stated only: measured once, not a scenario.")
		}, "C32 is Stated only, but equivalent/plainbegin's package doc cites it"},
		{"a variant whose doc cites a claim that does not name it", func(t *testing.T, doc string, w *claimsWorld) string {
			return replace(t, doc, "scenario `PoolOfOne`; `naive/poolread`;", "scenario `PoolOfOne`;")
		}, "naive/poolread's package doc cites C16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := *base
			w.scenarios = slices.Clone(base.scenarios)
			doc := tc.edit(t, text, &w)
			problems := claimsProblems(doc, &w)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.expect) }) {
				t.Errorf("claimsProblems(%s) = %q, want a problem mentioning %q", tc.name, problems, tc.expect)
			}
		})
	}
}
