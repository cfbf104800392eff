package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// sample is a report of 35 scenarios with long descriptions and three
// variants with long names: more than the kit has today.
func sample() *Report {
	var cols []ScenarioInfo
	for i := range 35 {
		cols = append(cols, ScenarioInfo{Name: fmt.Sprintf("Scenario%d", i), Short: fmt.Sprintf("Sc%d", i),
			Shows: strings.Repeat("a long description of what it shows ", 5), Claims: "C1, C2", Limit: map[bool]string{true: "exercise 9"}[i == 3]})
	}
	rep := New(cols, []VariantResults{{Name: "correct"}, {Name: "naive/busyasduplicate", Mistake: strings.Repeat("wrong ", 30)}, {Name: "naive/x"}})
	for i, s := range cols {
		rep.Set("correct", s.Name, &Cell{Pass: true})
		rep.Set("naive/busyasduplicate", s.Name, &Cell{Pass: i%3 == 0})
	}
	rep.Set("naive/x", "Scenario7", &Cell{Pass: true, Neutral: "the fault 'before the UPDATE of accounts' never fired"})
	return rep
}

func TestMatrixFitsAndParses(t *testing.T) {
	rep := sample()
	text := rep.Matrix()
	for i, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > Width {
			t.Errorf("Matrix() line %d is %d columns wide, want at most %d: %q", i+1, n, Width, line)
		}
	}
	got, err := ParseMatrix(text, rep.Scenarios)
	if err != nil {
		t.Fatalf("ParseMatrix(Matrix()) error = %v", err)
	}
	for _, v := range rep.Variants {
		for _, s := range rep.Scenarios {
			c := v.Results[s.Name]
			mark, ok := got[v.Name][s.Name]
			if (c == nil) != !ok || (c != nil && c.Mark() != mark) {
				t.Errorf("ParseMatrix(Matrix())[%s][%s] = %q, %v; want the cell %+v", v.Name, s.Name, mark, ok, c)
			}
		}
	}
}

func TestParseMatrixRejects(t *testing.T) {
	rep := sample()
	text := rep.Matrix()
	for name, broken := range map[string]string{
		"a column renamed": strings.Replace(text, "Sc4", "Sc9x", 1),
		"a cell missing":   strings.Replace(text, "✓", " ", 1),
		"an unknown mark":  strings.Replace(text, "✗", "x", 1),
		"no rows":          "",
	} {
		if _, err := ParseMatrix(broken, rep.Scenarios); err == nil {
			t.Errorf("ParseMatrix(%s) error = nil, want one", name)
		}
	}
}

func TestWrap(t *testing.T) {
	got := Wrap(strings.Repeat("word ", 50), 4)
	for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n")[1:] {
		if !strings.HasPrefix(line, "    word") {
			t.Errorf("Wrap(...) continuation line = %q, want it indented by 4", line)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if len(line) > Width {
			t.Errorf("Wrap(...) line is %d wide, want at most %d", len(line), Width)
		}
	}
}

// tidy is sample with descriptions as the registry writes them: no
// trailing spaces, which a wrapped legend cannot keep.
func tidy() *Report {
	rep := sample()
	for i := range rep.Scenarios {
		rep.Scenarios[i].Shows = strings.TrimSpace(rep.Scenarios[i].Shows) + " (and C9 in brackets)"
	}
	for i := range rep.Variants {
		rep.Variants[i].Mistake = strings.TrimSpace(rep.Variants[i].Mistake)
	}
	rep.Set("naive/x", "Scenario2", &Cell{Pass: false})
	return rep
}

// verdictsOnly is rep with every cell cut down to its verdict, as a
// matrix keeps it.
func verdictsOnly(rep *Report) *Report {
	out := New(rep.Scenarios, nil)
	out.Backend = rep.Backend
	for _, v := range rep.Variants {
		row := VariantResults{Name: v.Name, Mistake: v.Mistake, Results: map[string]*Cell{}}
		for s, c := range v.Results {
			row.Results[s] = &Cell{Pass: c.Pass}
			if c.IsNeutral() {
				row.Results[s].Neutral = recordedNeutral
			}
		}
		out.Variants = append(out.Variants, row)
	}
	return out
}

func TestParseReportRoundTrip(t *testing.T) {
	for _, backend := range []string{"", SQLite, PostgresBackend("serializable")} {
		rep := tidy()
		rep.Backend = backend
		text := rep.Matrix()
		got, err := ParseReport(text)
		if err != nil {
			t.Fatalf("ParseReport(Matrix()) error = %v", err)
		}
		got.Backend = backend
		if again := got.Matrix(); again != text {
			t.Errorf("ParseReport(Matrix()).Matrix() on %q differs:\n%s\nwant\n%s", backend, again, text)
		}
		want, _ := json.Marshal(verdictsOnly(rep))
		if gotJSON, _ := json.Marshal(got); string(gotJSON) != string(want) {
			t.Errorf("ParseReport(Matrix()) on %q differs from the report's verdicts and legend", backend)
		}
	}
}

// TestParseReportGolden reads the SQLite golden matrix back whole: what
// cmd/lab web shows for a backend it cannot run comes from such a file.
func TestParseReportGolden(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/testdata/matrix.golden")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ParseReport(string(data))
	if err != nil {
		t.Fatalf("ParseReport(matrix.golden) error = %v", err)
	}
	if got := rep.Matrix(); got != string(data) {
		t.Errorf("ParseReport(matrix.golden).Matrix() differs from the file:\n%s", got)
	}
	if c := rep.Cell("correct", "Duplicate"); c == nil || !c.Pass {
		t.Errorf("ParseReport(matrix.golden).Cell(correct, Duplicate) = %+v, want a pass", c)
	}
}

// TestParseReportRejects holds ParseReport to the whole text: a legend
// that no longer matches its table must not be read as if it did.
func TestParseReportRejects(t *testing.T) {
	rep := tidy()
	text := rep.Matrix()
	_, legend, _ := strings.Cut(text, "\n\n")
	for name, broken := range map[string]string{
		"a column's legend missing": strings.Replace(text, "Sc4   Scenario4", "", 1),
		"a column's legend renamed": strings.Replace(text, "Sc4   Scenario4", "Sc5   Scenario4", 1),
		"claims without brackets":   strings.Replace(text, "(C1, C2)", "C1, C2", 1),
		"a row's legend missing":    strings.Replace(text, "naive/x", "", 1),
		"a row's legend renamed":    strings.Replace(text, "\nnaive/x ", "\nnaive/y ", 1),
		"no legend":                 strings.SplitAfter(text, "\n\n")[0],
		"a table without rows":      legend,
		"rows and legend run on":    strings.Replace(text, "\n\n", "\n", 1),
		"an unknown mark in a row":  strings.Replace(text, Fail, "x", 1),
		"the column legend run on":  strings.Replace(text, "\n\ncorrect ", "\ncorrect ", 1),
		"a heading dropped":         strings.Replace(text, "Sc1", "   ", 1),
		"a legend with a 4th block": text + "\nextra\n",
		"a row name in the wrong order": strings.Replace(strings.Replace(text, "\nnaive/x ", "\nnaive/z ", 1),
			"\nnaive/busyasduplicate  ", "\nnaive/x                ", 1),
	} {
		if _, err := ParseReport(broken); err == nil {
			t.Errorf("ParseReport(%s) error = nil, want one", name)
		}
	}
}

// TestMatrixNeutral holds the neutral mark to what it is for: a cell that
// could not judge the handler is neither a pass nor a failure, in the
// table, in its key and read back; and a matrix without one is rendered as
// before the mark existed, so that the golden files of the cells that
// judged do not change. The wrong renderings it rejects: a neutral cell
// shown as ✓ (Pass is true), or as ✗; the key naming the mark in every
// matrix; and PostgreSQL's levels, one neutral and one not, each with a
// legend of its own.
func TestMatrixNeutral(t *testing.T) {
	const key = "✓ holds the guarantee   ✗ breaks it   · not run"
	const neutralKey = "✓ holds the guarantee   ✗ breaks it   ○ could not judge it (explain says why)   · not run"
	judged := func() *Report {
		rep := New([]ScenarioInfo{{Name: "Rollback", Short: "Roll", Shows: "s", Claims: "C1"}, {Name: "Duplicate", Short: "Dup", Shows: "s", Claims: "C1"},
			{Name: "Race", Short: "Race", Shows: "s", Claims: "C1"}},
			[]VariantResults{{Name: "correct"}, {Name: "naive/trigger", Mistake: "credits by a trigger"}})
		for _, s := range rep.Scenarios {
			rep.Set("correct", s.Name, &Cell{Pass: true})
			rep.Set("naive/trigger", s.Name, &Cell{Pass: s.Name == "Race"})
		}
		return rep
	}
	plain := judged()
	if got := plain.Matrix(); !strings.Contains(got, "\n"+key+"\n") || strings.Contains(got, Neutral) {
		t.Errorf("Matrix() without a neutral cell =\n%s\nwant the key %q and no %s", got, key, Neutral)
	}
	withNeutral := judged()
	withNeutral.Set("naive/trigger", "Rollback", &Cell{Pass: true, Neutral: "the fault 'before the UPDATE of accounts' never fired"})
	got := withNeutral.Matrix()
	if want := "naive/trigger " + Neutral + " " + Fail + " " + Pass + "\n"; !strings.Contains(got, want) {
		t.Errorf("Matrix() with a neutral cell =\n%s\nwant the row %q", got, want)
	}
	if !strings.Contains(got, "\n"+neutralKey+"\n") {
		t.Errorf("Matrix() with a neutral cell =\n%s\nwant the key %q", got, neutralKey)
	}
	if _, w := WidestLine(got); w > Width {
		t.Errorf("Matrix() with a neutral cell is %d columns wide, want at most %d", w, Width)
	}
	if c := withNeutral.Cell("naive/trigger", "Rollback"); c.Mark() != Neutral || !c.IsNeutral() || !c.Pass {
		t.Errorf("Cell{Pass: true, Neutral: …}.Mark(), IsNeutral() = %q, %v, want %q, true", c.Mark(), c.IsNeutral(), Neutral)
	}
	if c := (&Cell{Pass: false, Neutral: "ignored"}); c.Mark() != Fail || c.IsNeutral() {
		t.Errorf("Cell{Pass: false, Neutral: …}.Mark(), IsNeutral() = %q, %v, want %q, false: a broken guarantee is a failure", c.Mark(), c.IsNeutral(), Fail)
	}
	back, err := ParseReport(got)
	if err != nil {
		t.Fatalf("ParseReport(a matrix with a neutral cell) error = %v", err)
	}
	if c := back.Cell("naive/trigger", "Rollback"); c == nil || c.Mark() != Neutral {
		t.Errorf("ParseReport(…).Cell(naive/trigger, Rollback) = %+v, want a neutral cell", c)
	}
	marks, err := ParseMatrix(got, withNeutral.Scenarios)
	if err != nil || marks["naive/trigger"]["Rollback"] != Neutral || marks["naive/trigger"]["Duplicate"] != Fail {
		t.Errorf("ParseMatrix(…) = %v, %v; want naive/trigger's Rollback %s and Duplicate %s", marks, err, Neutral, Fail)
	}
	plain.Backend, withNeutral.Backend = PostgresBackend("read committed"), PostgresBackend("serializable")
	both := Matrices([]*Report{plain, withNeutral})
	if n := strings.Count(both, "Rollback: s (C1)"); n != 1 {
		t.Errorf("Matrices(a level without a neutral cell, one with) has %d legends, want 1, shared:\n%s", n, both)
	}
	if !strings.Contains(both, neutralKey) {
		t.Errorf("Matrices(…) =\n%s\nwant the shared key %q", both, neutralKey)
	}
}

func TestPermutationMark(t *testing.T) {
	for _, c := range []struct {
		p    Permutation
		want string
	}{
		{Permutation{}, Pass},
		{Permutation{Failures: []string{"balance 1000"}}, Fail},
		{Permutation{Neutral: "the fault never fired"}, Neutral},
	} {
		if got := c.p.Mark(); got != c.want {
			t.Errorf("%+v.Mark() = %q, want %q", c.p, got, c.want)
		}
	}
}

func TestMatrixCorrectPerBackend(t *testing.T) {
	for backend, want := range map[string]string{
		"":                                 "BEGIN IMMEDIATE",
		SQLite:                             "BEGIN IMMEDIATE",
		PostgresBackend("read committed"):  "40001",
		PostgresBackend("repeatable read"): "40001",
	} {
		rep := tidy()
		rep.Backend = backend
		if got := rep.Matrix(); !strings.Contains(got, want) {
			t.Errorf("Matrix() on %q does not say %q of correct", backend, want)
		}
	}
	if got := PostgresBackend("read committed"); got != "PostgreSQL READ COMMITTED" {
		t.Errorf("PostgresBackend(read committed) = %q, want %q", got, "PostgreSQL READ COMMITTED")
	}
}

func TestWriteAllReadAll(t *testing.T) {
	dir := t.TempDir()
	a, b := tidy(), tidy()
	a.Backend, b.Backend = SQLite, PostgresBackend("serializable")
	all := filepath.Join(dir, "all.json")
	if err := WriteAll(all, []*Report{a, b}); err != nil {
		t.Fatal(err)
	}
	reps, err := ReadAll(all)
	if err != nil || len(reps) != 2 {
		t.Fatalf("ReadAll(WriteAll(2 reports)) = %d reports, %v; want 2, nil", len(reps), err)
	}
	if got := Backend(reps, "PostgreSQL SERIALIZABLE"); got == nil || got.Matrix() != b.Matrix() {
		t.Errorf("Backend(reps, PostgreSQL SERIALIZABLE) = %v, want the second report", got)
	}
	if got := Backend(reps, "PostgreSQL READ COMMITTED"); got != nil {
		t.Errorf("Backend(reps, PostgreSQL READ COMMITTED) = %v, want nil", got.Backend)
	}
	one := filepath.Join(dir, "one.json")
	a.Backend = ""
	if err := a.Write(one); err != nil {
		t.Fatal(err)
	}
	reps, err = ReadAll(one)
	if err != nil || len(reps) != 1 || reps[0].BackendName() != SQLite {
		t.Errorf("ReadAll(Write(1 report)) = %d reports, %v; want the one, on SQLite", len(reps), err)
	}
}

func TestPattern(t *testing.T) {
	for _, tc := range []struct{ prefix, scenario, variant, want string }{
		{"^TestScenarios$", "Race", "naive/checkthenact", CellPattern("TestScenarios", "Race", "naive/checkthenact")},
		{"^TestScenarios$", "", "naive/checkthenact", "^TestScenarios$/.*/^naive$/^checkthenact$"},
		{"^TestScenarios$", "Race", "", "^TestScenarios$/^Race$"},
		{"^TestPostgres$/^(rc|rr)$", "Race", "correct", "^TestPostgres$/^(rc|rr)$/^Race$/^correct$"},
	} {
		if got := Pattern(tc.prefix, tc.scenario, tc.variant); got != tc.want {
			t.Errorf("Pattern(%q, %q, %q) = %q, want %q", tc.prefix, tc.scenario, tc.variant, got, tc.want)
		}
	}
}

func TestFinished(t *testing.T) {
	dir := t.TempDir()
	test := "TestScenarios/Race/naive/checkthenact"
	f := Finished{Backend: SQLite, Scenario: ScenarioInfo{Name: "Race", Short: "Race"}, Variant: "naive/checkthenact",
		Mistake: "check, then act", Cell: &Cell{Pass: false, Detail: "balance 1000, want 500",
			Lines: []Line{{Session: "A", Step: 1, Text: "SELECT", Result: "-> no row", Kind: KindStatement}}}}
	if err := WriteFinished(dir, test, f); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFinished(dir, "TestScenarios/Race/naive/check"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFinished(another test) error = %v, want fs.ErrNotExist", err)
	}
	got, err := ReadFinished(dir, test)
	if err != nil || !slices.Equal(got.Cell.Lines, f.Cell.Lines) || got.Variant != f.Variant {
		t.Fatalf("ReadFinished(WriteFinished(f)) = %+v, %v; want f", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("WriteFinished left %d files, want 1 (no temporary file)", len(entries))
	}
	rep := New([]ScenarioInfo{{Name: "Duplicate", Short: "Dup"}}, []VariantResults{{Name: "correct"}})
	rep.Add(got)
	if c := rep.Cell("naive/checkthenact", "Race"); c == nil || c.Pass {
		t.Errorf("Add(a cell of a new row and column): Cell = %+v, want the failing cell", c)
	}
	if len(rep.Scenarios) != 2 || len(rep.Variants) != 2 || rep.Variants[1].Mistake != f.Mistake {
		t.Errorf("Add(a cell of a new row and column) = %d columns, %d rows; want 2, 2 with its mistake", len(rep.Scenarios), len(rep.Variants))
	}
	rep.Add(got)
	if len(rep.Scenarios) != 2 || len(rep.Variants) != 2 {
		t.Errorf("Add(the same cell again) = %d columns, %d rows; want 2, 2", len(rep.Scenarios), len(rep.Variants))
	}
}

// widestLines are the widths WidestLine must find, and the wrong ways of
// measuring it must miss at least one of.
var widestLines = []struct {
	in    string
	width int
}{
	{"", 0},
	{"short\n" + strings.Repeat("x", 101) + "\nshort\n", 101},
	{strings.Repeat("✓", 100) + "\n", 100},      // 300 bytes, 100 columns
	{"a\nbb\n" + strings.Repeat("y", 120), 120}, // the widest is the last, with no newline
	{strings.Repeat("z", 90) + "\n" + "ab", 90},
}

func TestWidestLine(t *testing.T) {
	for _, c := range widestLines {
		if line, got := WidestLine(c.in); got != c.width || utf8.RuneCountInString(line) != c.width {
			t.Errorf("WidestLine(%.20q…) = %q, %d, want a line of %d", c.in, line, got, c.width)
		}
	}
}

// TestWidestLineRejectsWrongMeasures keeps the plausible wrong measures as
// cases: counting bytes (✓ is three), looking at the first line only, and
// ignoring a last line with no newline.
func TestWidestLineRejectsWrongMeasures(t *testing.T) {
	wrong := map[string]func(string) int{
		"bytes": func(s string) int {
			w := 0
			for _, l := range strings.Split(s, "\n") {
				w = max(w, len(l))
			}
			return w
		},
		"first line": func(s string) int {
			l, _, _ := strings.Cut(s, "\n")
			return utf8.RuneCountInString(l)
		},
		"whole lines only": func(s string) int {
			w := 0
			for _, l := range strings.SplitAfter(s, "\n") {
				if strings.HasSuffix(l, "\n") {
					w = max(w, utf8.RuneCountInString(l)-1)
				}
			}
			return w
		},
	}
	for name, measure := range wrong {
		caught := false
		for _, c := range widestLines {
			caught = caught || measure(c.in) != c.width
		}
		if !caught {
			t.Errorf("the cases of TestWidestLine do not tell WidestLine from the wrong measure %q", name)
		}
	}
}
