package report

import (
	"fmt"
	"strings"
)

// legend is what follows the matrix's table: the key to the marks (naming
// Neutral only when neutral is set), then a line per column (its short
// name, what it shows and its claims, and for a limit of the pattern what
// lifts it), then a line per row (the variant's mistake, or what correct
// does right). ParseReport reads it back. For a terminal, a claim list
// ("(C2, C6)") is never broken over two lines.
func (rep *Report) legend(neutral, terminal bool) string {
	wrap := Wrap
	if terminal {
		wrap = WrapClaims
	}
	var b strings.Builder
	nameWidth := rep.nameWidth()
	if neutral {
		fmt.Fprintf(&b, "%s holds the guarantee   %s breaks it   %s could not judge it (explain says why)   %s not run\n\n",
			Pass, Fail, Neutral, None)
	} else {
		fmt.Fprintf(&b, "%s holds the guarantee   %s breaks it   %s not run\n\n", Pass, Fail, None)
	}
	shortWidth := 0
	for _, s := range rep.Scenarios {
		shortWidth = max(shortWidth, len(s.Short))
	}
	for _, s := range rep.Scenarios {
		b.WriteString(wrap(fmt.Sprintf("%-*s  %s: %s (%s)", shortWidth, s.Short, s.Name, s.Shows, s.Claims), shortWidth+2))
		if s.Limit != "" {
			b.WriteString(Wrap(fmt.Sprintf("%-*s  %s%s lifts it", shortWidth, "", limitPrefix, s.Limit), shortWidth+2))
		}
	}
	b.WriteString("\n")
	for _, v := range rep.Variants {
		mistake := v.Mistake
		switch {
		case v.Name == "correct":
			mistake = rep.correctDoes()
		case mistake == "":
			mistake = "no mistake: correct written another way (go doc ./" + v.Name + ")"
		}
		b.WriteString(Wrap(fmt.Sprintf("%-*s  %s", nameWidth, v.Name, mistake), nameWidth+2))
	}
	return b.String()
}

// WrapClaims is Wrap, except that it never breaks a line inside
// the claim list that ends s, "(C2, C6)": the list moves to the next line
// whole.
func WrapClaims(s string, indent int) string {
	i := strings.LastIndex(s, " (")
	if i < 0 || !strings.HasSuffix(s, ")") {
		return Wrap(s, indent)
	}
	const nbsp = "\u00a0" // not a space to Wrap, which breaks at ' ' only
	kept := s[:i+1] + strings.ReplaceAll(s[i+1:], " ", nbsp)
	return strings.ReplaceAll(Wrap(kept, indent), nbsp, " ")
}

// correctDoes is the correct variant's line in the legend: what it does
// right, on the report's backend.
func (rep *Report) correctDoes() string {
	switch {
	case strings.HasPrefix(rep.Backend, "PostgreSQL"):
		return "the inbox row and the credit in one transaction, run again after a serialization " +
			"failure (40001) or a deadlock (40P01), a bounded number of times"
	case strings.HasPrefix(rep.Backend, "MariaDB"):
		return "the inbox row and the credit in one transaction, run again after a deadlock (1213) " +
			"or a snapshot conflict (1020), a bounded number of times"
	}
	return "the inbox row and the credit in one BEGIN IMMEDIATE transaction"
}

// limitPrefix starts the legend line of a limit's column.
const limitPrefix = "* a limit of the pattern: correct fails it by design; "
