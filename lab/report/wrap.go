package report

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Width is the widest line the matrix and its legend take: it must fit a
// terminal and a projector.
const Width = 100

// Wrap breaks s into lines of at most Width columns at spaces, indenting
// every line after the first by indent spaces, and ends it with a newline.
// Spaces within a line are kept as they are, so that columns stay aligned;
// a word longer than a line is left whole; s's own newlines become spaces.
func Wrap(s string, indent int) string { return WrapWidth(s, indent, Width) }

// WrapWidth is Wrap to width columns: for text that is indented when it is
// printed, such as a failure's message, which go test indents by 8.
func WrapWidth(s string, indent, width int) string {
	var b strings.Builder
	line, used := "", 0
	for _, tok := range wrapTokens.FindAllString(strings.ReplaceAll(s, "\n", " "), -1) {
		word := strings.TrimLeft(tok, " ")
		n := utf8.RuneCountInString(tok)
		if used > indent && used+n > width && word != "" {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line, used = strings.Repeat(" ", indent)+word, indent+utf8.RuneCountInString(word)
			continue
		}
		line += tok
		used += n
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// WidestLine returns the widest line of s and its width, in runes, the way
// a terminal counts columns for the kit's text ("✓" is three bytes and one
// column): tests hold every output the kit prints to Width with it.
func WidestLine(s string) (line string, width int) {
	for _, l := range strings.Split(s, "\n") {
		if n := utf8.RuneCountInString(l); n > width {
			line, width = l, n
		}
	}
	return line, width
}

// wrapTokens are the words of a line, each with the spaces before it.
var wrapTokens = regexp.MustCompile(` *[^ ]+| +$`)

// WrapWords breaks s at spaces into lines of at most width runes, every
// line after the first indented by indent spaces. A line that fits is kept
// as it is; a word longer than a line is cut. It is how a transcript wraps
// (RenderTranscript): unlike Wrap, it collapses the spaces of a line it
// breaks, and it cuts a word no line can hold.
func WrapWords(s string, width, indent int) []string {
	if utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	lead := len(s) - len(strings.TrimLeft(s, " "))
	indent = min(indent, width/2)
	var out []string
	line, n := s[:lead], lead
	fresh := true // the line has no word yet
	flush := func() {
		out = append(out, line)
		line, n, fresh = strings.Repeat(" ", indent), indent, true
	}
	for _, w := range strings.Fields(s) {
		wn := utf8.RuneCountInString(w)
		if !fresh && n+1+wn > width {
			flush()
		}
		if !fresh {
			line += " "
			n++
		}
		for n+wn > width { // a word longer than what is left of the line
			cut := width - n
			if cut <= 0 {
				flush()
				continue
			}
			line += string([]rune(w)[:cut])
			w = string([]rune(w)[cut:])
			wn -= cut
			flush()
		}
		line += w
		n += wn
		fresh = false
	}
	if !fresh || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// pad fills s with spaces to n runes.
func pad(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}
