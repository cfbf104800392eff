package scenarios_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/scenarios"
	"idemlab/variants"
)

// claim is one entry of CLAIMS.md.
type claim struct {
	scenarios []string // names in backticks without a slash on its Shown by line
	variants  []string // names in backticks with a slash
	shown     bool     // it has a Shown by line
	stated    bool     // it has a Stated only line
}

var (
	claimHeading = regexp.MustCompile(`^### (C\d+)\. `)
	backticked   = regexp.MustCompile("`([^`]+)`")
	claimCite    = regexp.MustCompile(`\bC\d+\b`)
)

// parseClaims reads CLAIMS.md: every "### Cn. title" heading and the
// "Shown by:" or "Stated only:" line under it.
func parseClaims(text string) (map[string]*claim, error) {
	claims := map[string]*claim{}
	var current string
	for i, line := range strings.Split(text, "\n") {
		if m := claimHeading.FindStringSubmatch(line); m != nil {
			if claims[m[1]] != nil {
				return nil, fmt.Errorf("line %d: %s is defined twice", i+1, m[1])
			}
			current = m[1]
			claims[current] = &claim{}
			continue
		}
		if current == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, "Shown by:"):
			c := claims[current]
			c.shown = true
			for _, m := range backticked.FindAllStringSubmatch(line, -1) {
				if strings.Contains(m[1], "/") {
					c.variants = append(c.variants, m[1])
				} else {
					c.scenarios = append(c.scenarios, m[1])
				}
			}
			current = ""
		case strings.HasPrefix(line, "Stated only:"):
			claims[current].stated = true
			current = ""
		}
	}
	for n, c := range claims {
		if !c.shown && !c.stated {
			return nil, fmt.Errorf("%s has neither a Shown by nor a Stated only line", n)
		}
	}
	return claims, nil
}

// claimsProblems returns every disagreement between the claims document and
// the scenarios' Claims fields, and every variant it names that the
// registry lacks.
func claimsProblems(claims map[string]*claim, all []labtest.Scenario, registry []string) []string {
	var problems []string
	cites := map[string][]string{} // claim → scenarios whose Claims field cites it
	for _, sc := range all {
		if sc.Claims == "all" {
			continue
		}
		for _, n := range claimCite.FindAllString(sc.Claims, -1) {
			cites[n] = append(cites[n], sc.Name)
			c := claims[n]
			if c == nil {
				problems = append(problems, fmt.Sprintf("scenario %s cites %s, which CLAIMS.md does not define", sc.Name, n))
				continue
			}
			if !slices.Contains(c.scenarios, sc.Name) {
				problems = append(problems, fmt.Sprintf("scenario %s cites %s, but CLAIMS.md's Shown by line for %s does not name it", sc.Name, n, n))
			}
		}
	}
	for n, c := range claims {
		for _, name := range c.scenarios {
			if !slices.Contains(cites[n], name) {
				problems = append(problems, fmt.Sprintf("CLAIMS.md says %s is shown by scenario %s, whose Claims field does not cite it", n, name))
			}
		}
		for _, v := range c.variants {
			if !slices.Contains(registry, v) {
				problems = append(problems, fmt.Sprintf("CLAIMS.md names %s under %s, which is no registered variant", v, n))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// TestClaims keeps CLAIMS.md and the scenarios in agreement, and makes every
// C-number cited anywhere in the repository resolve to an entry of it.
func TestClaims(t *testing.T) {
	text, err := os.ReadFile("../CLAIMS.md")
	if err != nil {
		t.Fatal(err)
	}
	claims, err := parseClaims(string(text))
	if err != nil {
		t.Fatalf("parseClaims(CLAIMS.md): %v", err)
	}
	var registry []string
	for _, v := range variants.All {
		registry = append(registry, v.Name)
	}
	for _, p := range claimsProblems(claims, scenarios.All, registry) {
		t.Error(p)
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

// TestClaimsCatchesDrift holds claimsProblems to the drifts it exists for.
func TestClaimsCatchesDrift(t *testing.T) {
	text, err := os.ReadFile("../CLAIMS.md")
	if err != nil {
		t.Fatal(err)
	}
	var registry []string
	for _, v := range variants.All {
		registry = append(registry, v.Name)
	}
	race := slices.IndexFunc(scenarios.All, func(s labtest.Scenario) bool { return s.Name == "Race" })

	for _, tc := range []struct {
		name   string
		edit   func(doc string, all []labtest.Scenario) (string, []labtest.Scenario)
		expect string
	}{
		{"a scenario cites a claim the document lacks", func(doc string, all []labtest.Scenario) (string, []labtest.Scenario) {
			all[race].Claims += ", C" + "99" // spelled in two so that this file cites no missing claim
			return doc, all
		}, "C" + "99"},
		{"a scenario cites a claim whose line does not name it", func(doc string, all []labtest.Scenario) (string, []labtest.Scenario) {
			all[race].Claims += ", C7"
			return doc, all
		}, "scenario Race cites C7"},
		{"the document names a scenario that does not cite the claim", func(doc string, all []labtest.Scenario) (string, []labtest.Scenario) {
			return strings.Replace(doc, "Shown by: scenario `SourceScope`", "Shown by: scenarios `SourceScope`, `Duplicate`", 1), all
		}, "shown by scenario Duplicate"},
		{"the document names a variant that does not exist", func(doc string, all []labtest.Scenario) (string, []labtest.Scenario) {
			return strings.Replace(doc, "`naive/sourceless`", "`naive/keyless`", 1), all
		}, "naive/keyless"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, all := tc.edit(string(text), slices.Clone(scenarios.All))
			claims, err := parseClaims(doc)
			if err != nil {
				t.Fatal(err)
			}
			problems := claimsProblems(claims, all, registry)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.expect) }) {
				t.Errorf("claimsProblems(%s) = %q, want a problem mentioning %q", tc.name, problems, tc.expect)
			}
		})
	}
}
