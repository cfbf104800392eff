package report

import (
	"regexp"
	"strings"
)

// CellPattern is the go test -run pattern that selects exactly one cell of
// the matrix test named test, test/<scenario>/<variant>: every element
// anchored and quoted, the variant split at its slashes, since go test
// matches each slash-separated element of a subtest name on its own. The
// test's name belongs to the test that defines it, so the caller passes it.
func CellPattern(test, scenario, variant string) string {
	return anchored(test) + "/" + anchored(scenario) + "/" + variantPattern(variant)
}

// Pattern is the go test -run pattern that selects, under prefix (a
// pattern already, such as "^TestPostgres$/^(rc|rr)$"), the cells of
// scenario and variant; an empty scenario or variant stands for every one.
// CellPattern is Pattern under one test, for one cell.
func Pattern(prefix, scenario, variant string) string {
	p := prefix + "/"
	if scenario == "" {
		p += ".*"
	} else {
		p += anchored(scenario)
	}
	if variant != "" {
		p += "/" + variantPattern(variant)
	}
	return p
}

func anchored(name string) string { return "^" + regexp.QuoteMeta(name) + "$" }

func variantPattern(variant string) string {
	var parts []string
	for _, p := range strings.Split(variant, "/") {
		parts = append(parts, anchored(p))
	}
	return strings.Join(parts, "/")
}
