package report

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var lookupNames = []Name{
	{Full: "Race", Short: "Race"},
	{Full: "ConflictRace", Short: "CRace"},
	{Full: "Cancel", Short: "Cncl"},
	{Full: "BusinessKey", Short: "Biz*"},
	{Full: "Concurrent", Short: "Conc"},
}

// TestLookup holds Lookup to its order: a whole spelling first (so "race"
// is Race, though CRace ends with it), then a glob, then a start; the
// first that finds anything must find one.
func TestLookup(t *testing.T) {
	for arg, want := range map[string]int{
		"Race": 0, "race": 0, "CRACE": 1, "conflictrace": 1, "cncl": 2, "Biz*": 3, "biz": 3,
		"Busi": 3, "b*": 3, "*key": 3, "./Cancel/": 2, "Conflict": 1, "concur": 4,
	} {
		if got, err := Lookup("scenario", arg, lookupNames); err != nil || got != want {
			t.Errorf("Lookup(%q) = %d, %v, want %d, nil", arg, got, err, want)
		}
	}
	var vars []Name
	for _, v := range []string{"correct", "naive/checkthenact", "naive/checkthenacttx", "equivalent/plainbegin"} {
		vars = append(vars, variantName(v))
	}
	for arg, want := range map[string]int{"checkthenact": 1, "naive/checkthenact": 1, "CheckThenActTx": 2, "plain": 3, "c*rect": 0} {
		if got, err := Lookup("variant", arg, vars); err != nil || got != want {
			t.Errorf("Lookup(variant %q) = %d, %v, want %d, nil", arg, got, err, want)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	for arg, want := range map[string]string{
		"c":      `ambiguous scenario "c": ConflictRace, Cancel or Concurrent`,
		"*race":  `ambiguous scenario "*race": Race or ConflictRace`,
		"Racee":  `unknown scenario "Racee"; did you mean Race?`,
		"Cancle": `unknown scenario "Cancle"; did you mean Cancel?`,
		"zzz":    `unknown scenario "zzz"; scenarios are: Race, ConflictRace, Cancel, BusinessKey, Concurrent`,
		" ":      `no scenario named; give one, e.g. Race, ConflictRace, Cancel, BusinessKey or Concurrent`,
		"[":      `unknown scenario "["; scenarios are: `,
	} {
		_, err := Lookup("scenario", arg, lookupNames)
		var le *LookupError
		if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Lookup(%q) error = %v, want %q", arg, err, want)
		}
	}
	var many []Name
	for _, n := range strings.Fields("alpha alpine alps altar alto alum always amber ample amuse") {
		many = append(many, Name{Full: "naive/" + n + strings.Repeat("x", 10)})
	}
	_, err := Lookup("variant", strings.Repeat("n", 40), many)
	if got := err.Error(); utf8.RuneCountInString(got) > lookupWidth || !strings.Contains(got, `"nnnnnnnnnnnnnnnnnnnnnnn…"`) {
		t.Errorf("Lookup(a long name among many) error = %q (%d runes), want the name clipped and at most %d runes",
			got, utf8.RuneCountInString(got), lookupWidth)
	}
	_, err = Lookup("variant", "a", many)
	if got := err.Error(); utf8.RuneCountInString(got) > lookupWidth || !strings.Contains(got, " more") {
		t.Errorf("Lookup(a, ten names start with it) error = %q, want as many as fit and how many more", got)
	}
}

func TestLookupTree(t *testing.T) {
	rep := New([]ScenarioInfo{{Name: "Race", Short: "Race"}, {Name: "ConflictRace", Short: "CRace"}, {Name: "Duplicate", Short: "Dup"}},
		[]VariantResults{{Name: "correct"}, {Name: "naive/checkthenact"}})
	st := &Stepper{Trees: []*Tree{{Variant: "naive/checkthenact", Scenario: "ConflictRace"}}}
	if got, err := st.LookupTree(rep, "checkthenact", "crace"); err != nil || got != st.Trees[0] {
		t.Errorf("LookupTree(checkthenact, crace) = %v, %v, want the tree", got, err)
	}
	if _, err := st.LookupTree(rep, "correct", "dup"); err == nil || !strings.Contains(err.Error(), "no race correct × Duplicate") {
		t.Errorf("LookupTree(correct, dup) error = %v, want no race correct × Duplicate", err)
	}
}
