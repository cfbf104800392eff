package report

import (
	"fmt"
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
			pass, ok := got[v.Name][s.Name]
			if (c == nil) != !ok || (c != nil && c.Pass != pass) {
				t.Errorf("ParseMatrix(Matrix())[%s][%s] = %v, %v; want the cell %+v", v.Name, s.Name, pass, ok, c)
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
