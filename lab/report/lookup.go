package report

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// A Name is a row or a column as a person may name it on a command line or
// in a page's URL: Full is the name the report keys it by ("ConflictRace",
// "naive/checkthenact"), Short the matrix's heading of a column ("CRace",
// "Biz*"; "" for a row).
type Name struct {
	Full, Short string
}

// label is how a name is shown in a lookup's error: its full name, which
// says what it is and which Lookup always takes.
func (n Name) label() string { return n.Full }

// forms are the spellings a name answers to, in lower case: the full name,
// the short one with and without its limit's *, and the last element of a
// full name with a slash ("checkthenact" for "naive/checkthenact").
func (n Name) forms() []string {
	forms := []string{strings.ToLower(n.Full)}
	if n.Short != "" {
		short := strings.ToLower(n.Short)
		forms = append(forms, short, strings.TrimSuffix(short, "*"))
	}
	if i := strings.LastIndex(n.Full, "/"); i >= 0 {
		forms = append(forms, strings.ToLower(n.Full[i+1:]))
	}
	return forms
}

// Lookup returns the index in names of the one name arg means, trying in
// turn, in any case:
//
//   - a spelling of a name, whole: the full name, the short one (with or
//     without its *), or the full name's last element ("checkthenact");
//   - a glob, if arg has *, ? or [ ("Biz*", "naive/check*");
//   - the start of a spelling ("Rollb", "mark").
//
// A leading ./ and a trailing / are left out, as a shell's completion of a
// package's directory leaves them. The first way that finds anything must
// find one name; otherwise the error is a *LookupError, one line that says
// which names arg could mean or which ones are close to it. kind names
// what is looked up, "scenario" or "variant", for the error.
//
// It is the one lookup of the kit: the command's arguments and the page's
// URLs both go through it, so a name that works in one works in the other.
func Lookup(kind, arg string, names []Name) (int, error) {
	a := normalize(arg)
	if a == "" {
		return -1, &LookupError{Kind: kind, Arg: arg, names: names}
	}
	tiers := []func(form string) bool{
		func(form string) bool { return form == a },
		func(form string) bool {
			ok, err := path.Match(a, form)
			return strings.ContainsAny(a, "*?[") && err == nil && ok
		},
		func(form string) bool { return strings.HasPrefix(form, a) },
	}
	for _, matches := range tiers {
		var found []int
		for i, n := range names {
			if slices.ContainsFunc(n.forms(), matches) {
				found = append(found, i)
			}
		}
		switch {
		case len(found) == 1:
			return found[0], nil
		case len(found) > 1:
			e := &LookupError{Kind: kind, Arg: arg, names: names}
			for _, i := range found {
				e.Matches = append(e.Matches, names[i].label())
			}
			return -1, e
		}
	}
	e := &LookupError{Kind: kind, Arg: arg, names: names}
	e.Close = closeTo(a, names)
	return -1, e
}

// normalize is arg as Lookup compares it: trimmed, in lower case, without
// a leading ./ or a trailing /.
func normalize(arg string) string {
	a := strings.ToLower(strings.TrimSpace(strings.ReplaceAll(arg, `\`, "/")))
	a = strings.TrimPrefix(a, "./")
	return strings.TrimSuffix(a, "/")
}

// closeTo returns the labels of the names a spelling of which is a few
// edits from a, or holds it, closest first.
func closeTo(a string, names []Name) []string {
	a = strings.Trim(a, "*?[]")
	type near struct {
		label string
		dist  int
	}
	var nears []near
	for _, n := range names {
		best := -1
		for _, form := range n.forms() {
			d := distance(a, form)
			if len(a) >= 3 && (strings.Contains(form, a) || len(form) >= 4 && strings.Contains(a, form)) {
				d = min(d, 1)
			}
			if best < 0 || d < best {
				best = d
			}
		}
		if best <= max(1, utf8.RuneCountInString(a)/3) {
			nears = append(nears, near{n.label(), best})
		}
	}
	slices.SortStableFunc(nears, func(x, y near) int { return x.dist - y.dist })
	var out []string
	for _, n := range nears {
		out = append(out, n.label)
	}
	return out
}

// distance is the Levenshtein distance of a and b, in runes.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := range x {
		cur := make([]int, len(y)+1)
		cur[0] = i + 1
		for j := range y {
			cost := 1
			if x[i] == y[j] {
				cost = 0
			}
			cur[j+1] = min(prev[j+1]+1, cur[j]+1, prev[j]+cost)
		}
		prev = cur
	}
	return prev[len(y)]
}

// LookupError is Lookup's answer to a name that names no row or column,
// or more than one.
type LookupError struct {
	Kind string // "scenario", "variant"
	Arg  string // as it was given
	// Matches are the names arg could mean, when it is ambiguous.
	Matches []string
	// Close are the names close to arg, when it means none.
	Close []string
	names []Name
}

// lookupWidth is the widest a LookupError's line gets, in runes, so that
// it fits Width behind a command's name ("lab: ").
const lookupWidth = Width - 6

// Error is one line: what is wrong with the name, and the names it could
// mean or is close to, as many as fit; when none is close and every name
// fits, every name.
func (e *LookupError) Error() string {
	arg := e.Arg
	if utf8.RuneCountInString(arg) > 24 {
		arg = string([]rune(arg)[:23]) + "…"
	}
	switch {
	case normalize(e.Arg) == "":
		return e.list(fmt.Sprintf("no %s named; give one", e.Kind), ", e.g. ", e.all(), " or ")
	case len(e.Matches) > 0:
		return e.list(fmt.Sprintf("ambiguous %s %q", e.Kind, arg), ": ", e.Matches, " or ")
	case len(e.Close) > 0:
		return e.list(fmt.Sprintf("unknown %s %q", e.Kind, arg), "; did you mean ", e.Close, " or ") + "?"
	}
	head := fmt.Sprintf("unknown %s %q", e.Kind, arg)
	if list := fmt.Sprintf("%s; %ss are: %s", head, e.Kind, strings.Join(e.all(), ", ")); utf8.RuneCountInString(list) <= lookupWidth {
		return list
	}
	return fmt.Sprintf("%s, and no %s's name is close to it", head, e.Kind)
}

// all are the labels of every name.
func (e *LookupError) all() []string {
	var out []string
	for _, n := range e.names {
		out = append(out, n.label())
	}
	return out
}

// list is head, then sep and as many of items as fit lookupWidth, the last
// after or ("…, or 3 more" when some do not fit).
func (e *LookupError) list(head, sep string, items []string, or string) string {
	for n := len(items); n > 0; n-- {
		shown := slices.Clone(items[:n])
		if rest := len(items) - n; rest > 0 {
			shown = append(shown, fmt.Sprintf("%d more", rest))
		}
		text := shown[0]
		if len(shown) > 1 {
			text = strings.Join(shown[:len(shown)-1], ", ") + or + shown[len(shown)-1]
		}
		if line := head + sep + text; utf8.RuneCountInString(line) <= lookupWidth || n == 1 {
			return line
		}
	}
	return head
}

// lookupIn returns the item of items that arg names (Lookup), each
// named by name.
func lookupIn[T any](kind, arg string, items []T, name func(T) Name) (T, error) {
	names := make([]Name, len(items))
	for i, it := range items {
		names[i] = name(it)
	}
	i, err := Lookup(kind, arg, names)
	if err != nil {
		var zero T
		return zero, err
	}
	return items[i], nil
}

func scenarioName(s ScenarioInfo) Name { return Name{Full: s.Name, Short: s.Short} }

func variantName(v string) Name { return Name{Full: v} }

// LookupScenario returns the column of cols that arg names (Lookup).
func LookupScenario(cols []ScenarioInfo, arg string) (ScenarioInfo, error) {
	return lookupIn("scenario", arg, cols, scenarioName)
}

// LookupVariant returns the row of rows that arg names (Lookup).
func LookupVariant(rows []string, arg string) (string, error) {
	return lookupIn("variant", arg, rows, variantName)
}

// LookupScenario returns the column of rep that arg names (Lookup).
func (rep *Report) LookupScenario(arg string) (ScenarioInfo, error) {
	return LookupScenario(rep.Scenarios, arg)
}

// LookupVariant returns the row of rep that arg names (Lookup).
func (rep *Report) LookupVariant(arg string) (VariantResults, error) {
	return lookupIn("variant", arg, rep.Variants, func(v VariantResults) Name { return variantName(v.Name) })
}

// LookupTree returns the race of the stepper that variant and scenario
// name, resolved against rep's rows and columns (Lookup), or an error that
// says what is wrong with them.
func (s *Stepper) LookupTree(rep *Report, variant, scenario string) (*Tree, error) {
	v, err := rep.LookupVariant(variant)
	if err != nil {
		return nil, err
	}
	const races = "the stepper has every variant × Race and ConflictRace"
	sc, err := rep.LookupScenario(scenario)
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, races)
	}
	if t := s.Tree(v.Name, sc.Name); t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("no race %s × %s to step: %s", v.Name, sc.Name, races)
}
