package scenarios_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"idemlab/lab"
	"idemlab/variants"
)

// readFile returns the text of the document at path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// oneLine is s with every run of white space one space: prose wraps.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// naiveCount counts the naive rows among vs.
func naiveCount(vs []lab.Variant) int {
	n := 0
	for _, v := range vs {
		if strings.HasPrefix(v.Name, "naive/") {
			n++
		}
	}
	return n
}

// word spells n as the README's prose does.
func word(n int) string {
	if n < len(numberWords) {
		return numberWords[n]
	}
	return fmt.Sprint(n)
}

// TestReadmeCounts holds the README's count of naive handlers, engine by
// engine, to the rows of the matrices (those go run ./cmd/lab -h lists),
// in README.md in words and in README.ru.md in figures.
func TestReadmeCounts(t *testing.T) {
	sqlite, pg, maria := naiveCount(variants.All), naiveCount(postgresRows()), naiveCount(mariadbRows())
	all := naiveCount(slices.Concat(variants.All, variants.PostgresOnly, variants.MariaDBOnly))
	for _, c := range []struct{ path, want string }{
		{readmePath, fmt.Sprintf("%s in the SQLite matrix, %s in PostgreSQL's, %s in MariaDB's, %s in all",
			word(sqlite), word(pg), word(maria), word(all))},
		{readmeRuPath, fmt.Sprintf("%d в матрице SQLite, %d в PostgreSQL, %d в MariaDB, всего %d",
			sqlite, pg, maria, all)},
	} {
		if !strings.Contains(oneLine(readFile(t, c.path)), c.want) {
			t.Errorf("strings.Contains(%s, %q) = false, want true: count the naive handlers as the matrices have them", c.path, c.want)
		}
	}
}

// TestReadmeSkips keeps the README from promising what go test ./...
// does not print: without -v, a skipped test prints nothing.
func TestReadmeSkips(t *testing.T) {
	doc := oneLine(readFile(t, readmePath))
	if strings.Contains(doc, "one line each") {
		t.Errorf("%s says skipped tests print a line each; go test ./... without -v prints none", readmePath)
	}
	if !strings.Contains(doc, "`go test ./... -v 2>&1 | grep SKIP`") {
		t.Errorf("%s does not say how to see the skipped tests: go test ./... -v 2>&1 | grep SKIP", readmePath)
	}
}

// prose is doc without its code blocks and its comment lines (the
// markers of generated blocks), as
// awk '/^```/{c=!c;next} /^<!--/{next} !c' README.md counts it.
func prose(doc string) string {
	var b strings.Builder
	code := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			code = !code
		case code, strings.HasPrefix(line, "<!--"):
		default:
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// TestReadmeLength keeps the front door short: at most 1,500 words of
// prose, and 2,500 words in all as wc -w counts them.
func TestReadmeLength(t *testing.T) {
	doc := readFile(t, readmePath)
	if n := len(strings.Fields(prose(doc))); n > 1500 {
		t.Errorf("%s has %d words of prose, want at most 1,500: move the detail into docs/", readmePath, n)
	}
	if n := len(strings.Fields(doc)); n > 2500 {
		t.Errorf("%s has %d words, want at most 2,500", readmePath, n)
	}
}

// docWidth is the widest a line of the documents may be, in runes.
const docWidth = 100

var tableRow = regexp.MustCompile(`^\s*\|.*\|\s*$`)

// verbatimMarker, on the line before a code block, says that the block is
// a tool's output as it printed it, wider than docWidth, and exempts it.
const verbatimMarker = "<!-- verbatim: a tool's output, wider than 100 columns -->"

// wideLines returns the lines of doc wider than docWidth that could be
// narrower: not in a generated block, not a row of a Markdown table or a
// heading (neither can break), not in a block after verbatimMarker, and
// not a word too long for a line on its own (a URL).
func wideLines(doc string) []string {
	var wide []string
	generated, code, verbatim := "", false, false
	lines := strings.Split(doc, "\n")
	for i, line := range lines {
		if m := generatedBegin.FindStringSubmatch(line + "\n"); m != nil {
			generated = m[1]
		}
		if generated != "" {
			if line == "<!-- end of "+generated+" -->" {
				generated = ""
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			code = !code
			verbatim = code && i > 0 && lines[i-1] == verbatimMarker
			continue
		}
		if verbatim || utf8.RuneCountInString(line) <= docWidth || !code && (tableRow.MatchString(line) || strings.HasPrefix(line, "#")) {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if longest := slices.MaxFunc(strings.Fields(line), func(a, b string) int {
			return utf8.RuneCountInString(a) - utf8.RuneCountInString(b)
		}); indent+utf8.RuneCountInString(longest) > docWidth {
			continue
		}
		wide = append(wide, fmt.Sprintf("line %d, %d columns: %s", i+1, utf8.RuneCountInString(line), line))
	}
	return wide
}

// TestDocsFit holds every line of README.md, README.ru.md, CLAIMS.md (the
// page's Claims tab), EXERCISES.md and docs/*.md to 100 columns, but for
// what wideLines exempts.
func TestDocsFit(t *testing.T) {
	paths, err := filepath.Glob("../docs/*.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	for _, path := range append([]string{readmePath, readmeRuPath, "../CLAIMS.md", "../EXERCISES.md"}, paths...) {
		for _, l := range wideLines(readFile(t, path)) {
			t.Errorf("%s: %s", path, l)
		}
	}
	wide := strings.Repeat("word ", 21)
	if len(wideLines(wide)) != 1 {
		t.Errorf("wideLines(a line of 105 columns) = none, want it: the check cannot fail")
	}
	if got := wideLines("| " + wide + "|\n" + strings.Repeat("x", 120)); len(got) != 0 {
		t.Errorf("wideLines(a table row and a URL) = %q, want none", got)
	}
	if got := wideLines(verbatimMarker + "\n```\n" + wide + "\n```\n" + wide); len(got) != 1 {
		t.Errorf("wideLines(a verbatim block, then a wide line) = %q, want the line after the block", got)
	}
}
