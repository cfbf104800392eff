package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Matrix renders the verdicts as a table, rows variants and columns
// scenarios, followed by a legend of both. It is the text of the golden file
// and of the README: it holds no evidence, only verdicts, so it changes only
// when a verdict does.
//
// Every column is two characters wide, so that the table fits Width with
// room for more scenarios; the column headings, up to five letters, are
// staggered over three lines, the first heading on the first line, the
// second on the second, the third on the third, the fourth on the first
// again, and so on:
//
//	                       Dup   Crash
//	                         Conf  Conc
//	                           Roll
//	correct                ✓ ✓ ✓ ✓ ✓
//
// A neutral cell (see Cell) is marked with Neutral, and the key to the
// marks names it only when the matrix has one, so that a matrix without
// one reads as it always has.
func (rep *Report) Matrix() string { return rep.matrix(rep.hasNeutral(), false) }

// Terminal renders the matrix as the command prints it: Matrix's rows and
// legend, but under a heading that needs no decoding, each column's short
// name written down the column, and with a legend that never breaks a line
// inside a claim list. The golden files and the README keep Matrix's text,
// whose staggered heading ParseReport reads back.
//
//	                      D C R F
//	                      u o o a
//	                      p n l u
//	                          l l
//	                            t
//	correct               ✓ ✓ ✓ ✓
func (rep *Report) Terminal() string { return rep.matrix(rep.hasNeutral(), true) }

// hasNeutral reports whether a cell of rep is neutral.
func (rep *Report) hasNeutral() bool {
	for _, v := range rep.Variants {
		for _, c := range v.Results {
			if c != nil && c.IsNeutral() {
				return true
			}
		}
	}
	return false
}

// matrix is Matrix, or Terminal if terminal is set, with the neutral mark
// in the key when neutral is set: the table, an empty line, and the legend.
func (rep *Report) matrix(neutral, terminal bool) string {
	return rep.table(terminal) + "\n" + rep.legend(neutral, terminal)
}

// table is the matrix's table: the column headings, staggered or (for a
// terminal) written down the columns, then a row of marks per variant.
func (rep *Report) table(terminal bool) string {
	var b strings.Builder
	nameWidth := rep.nameWidth()
	if terminal {
		b.WriteString(rep.verticalHeading(nameWidth))
	} else {
		b.WriteString(rep.staggeredHeading(nameWidth))
	}
	for _, v := range rep.Variants {
		row := fmt.Sprintf("%-*s", nameWidth, v.Name)
		for _, s := range rep.Scenarios {
			mark := None
			if c := v.Results[s.Name]; c != nil {
				mark = c.Mark()
			}
			row += " " + mark
		}
		b.WriteString(row + "\n")
	}
	return b.String()
}

// verticalHeading writes each column's short name down its column, a
// letter a line, from the top: as many lines as the longest name has
// letters.
func (rep *Report) verticalHeading(nameWidth int) string {
	var b strings.Builder
	longest := 0
	for _, s := range rep.Scenarios {
		longest = max(longest, utf8.RuneCountInString(s.Short))
	}
	for line := range longest {
		row := strings.Repeat(" ", nameWidth)
		for _, s := range rep.Scenarios {
			letter := " "
			if r := []rune(s.Short); line < len(r) {
				letter = string(r[line])
			}
			row += " " + letter
		}
		b.WriteString(strings.TrimRight(row, " ") + "\n")
	}
	return b.String()
}

// staggeredHeading is the golden file's heading: the short names, up to
// five letters, staggered over three lines (see Matrix).
func (rep *Report) staggeredHeading(nameWidth int) string {
	var b strings.Builder
	// Columns are colWidth wide; a heading needs its letters and a space,
	// so the headings are staggered over as many lines as that takes.
	const colWidth = 2
	longest := 1
	for _, s := range rep.Scenarios {
		longest = max(longest, len(s.Short))
	}
	lines := (longest + colWidth) / colWidth
	for line := range lines {
		row := fmt.Sprintf("%-*s", nameWidth, "")
		for i, s := range rep.Scenarios {
			if i%lines != line {
				continue
			}
			col := nameWidth + 1 + colWidth*i
			row += strings.Repeat(" ", col-len(row)) + s.Short
		}
		b.WriteString(strings.TrimRight(row, " ") + "\n")
	}
	return b.String()
}

// nameWidth is the width of the matrix's first column, the variants'
// names.
func (rep *Report) nameWidth() int {
	width := len("variant")
	for _, v := range rep.Variants {
		width = max(width, len(v.Name))
	}
	return width
}

// Matrices renders the matrices of several backends, each table under its
// backend's name. When their legends are the same, as PostgreSQL's three
// levels' are, the tables come first, to be read side by side, then the
// legend once; otherwise each table has its own. One matrix alone on SQLite
// is Matrix's text, untitled: the golden file's.
func Matrices(reps []*Report) string { return matrices(reps, false) }

// TerminalMatrices is Matrices as the command prints them: each table
// Terminal's.
func TerminalMatrices(reps []*Report) string { return matrices(reps, true) }

// matrices is Matrices, or TerminalMatrices if terminal is set.
func matrices(reps []*Report, terminal bool) string {
	if len(reps) == 1 && !reps[0].OnServer() {
		return reps[0].matrix(reps[0].hasNeutral(), terminal)
	}
	var b strings.Builder
	tables, legends := make([]string, len(reps)), make([]string, len(reps))
	shared, neutral := true, false
	for _, rep := range reps {
		neutral = neutral || rep.hasNeutral()
	}
	for i, rep := range reps {
		tables[i], legends[i], _ = strings.Cut(rep.matrix(neutral, terminal), "\n\n")
		shared = shared && legends[i] == legends[0]
	}
	for i, rep := range reps {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(Title(rep.BackendName()) + tables[i] + "\n")
		if !shared {
			b.WriteString("\n" + legends[i])
		}
	}
	if shared && len(reps) > 0 {
		b.WriteString("\n" + legends[0])
	}
	return b.String()
}

// Title is a backend's name as a heading over its part of an output,
// underlined.
func Title(name string) string {
	return name + "\n" + strings.Repeat("=", utf8.RuneCountInString(name)) + "\n"
}
