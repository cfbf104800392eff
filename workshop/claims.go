package workshop

import (
	"bytes"
	"html/template"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"

	"idemlab/lab/report"
)

// Claim is one entry of CLAIMS.md with the matrix cells that demonstrate
// it.
type Claim struct {
	ID, Title string
	Body      []string // paragraphs, as Markdown
	ShownBy   string   // the "Shown by:" or "Stated only:" line, as Markdown
	Cells     []CellRef
}

// TitleHTML, BodyHTML and ShownByHTML render the claim's Markdown
// (CommonMark, through goldmark): `code` is code on the page, not
// backticks. Raw HTML in CLAIMS.md is left out, as goldmark does by
// default.
func (c Claim) TitleHTML() template.HTML {
	return template.HTML(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(markdown(c.Title))), "<p>"), "</p>"))
}

func (c Claim) BodyHTML() template.HTML { return markdown(strings.Join(c.Body, "\n\n")) }

func (c Claim) ShownByHTML() template.HTML { return markdown(c.ShownBy) }

// markdown renders Markdown as HTML.
func markdown(src string) template.HTML {
	var b bytes.Buffer
	if err := goldmark.Convert([]byte(src), &b); err != nil {
		return template.HTML(template.HTMLEscapeString(src))
	}
	return template.HTML(b.String())
}

// CellRef names a cell of the matrix, with its verdict.
type CellRef struct {
	Variant, Scenario string
	// Pass is the cell's Pass: no guarantee broke (it held, or it could
	// not judge).
	Pass bool
	// Mark is the verdict as the matrix shows it: report.Pass, report.Fail
	// or report.Neutral.
	Mark string
}

var (
	claimHeading = regexp.MustCompile(`^### (C\d+)\. (.*)$`)
	backticked   = regexp.MustCompile("`([^`]+)`")
)

// ParseClaims reads CLAIMS.md and links every claim to its cells: the
// cells of each scenario named on its "Shown by:" line, for correct and for
// each variant named there (the variant that breaks the claim), as far as
// the report has them.
func ParseClaims(text string, rep *report.Report) []Claim {
	var claims []Claim
	var c *Claim
	para := ""
	end := func() {
		if c != nil && strings.TrimSpace(para) != "" {
			c.Body = append(c.Body, strings.TrimSpace(para))
		}
		para = ""
	}
	for _, line := range strings.Split(text, "\n") {
		if m := claimHeading.FindStringSubmatch(line); m != nil {
			end()
			claims = append(claims, Claim{ID: m[1], Title: m[2]})
			c = &claims[len(claims)-1]
			continue
		}
		if c == nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, "## "):
			end()
			c = nil
		case strings.HasPrefix(line, "Shown by:") || strings.HasPrefix(line, "Stated only:"):
			end()
			c.ShownBy = line
		case strings.TrimSpace(line) == "":
			end()
		case c.ShownBy != "":
			c.ShownBy += "\n" + strings.TrimSpace(line)
		default:
			para += line + "\n"
		}
	}
	end()
	for i := range claims {
		claims[i].Cells = cellsOf(claims[i].ShownBy, rep)
	}
	return claims
}

func cellsOf(shownBy string, rep *report.Report) []CellRef {
	if !strings.HasPrefix(shownBy, "Shown by:") || rep == nil {
		return nil
	}
	var scenarios []string
	variants := []string{"correct"}
	for _, m := range backticked.FindAllStringSubmatch(shownBy, -1) {
		if strings.Contains(m[1], "/") {
			variants = append(variants, m[1])
		} else {
			scenarios = append(scenarios, m[1])
		}
	}
	var refs []CellRef
	for _, s := range scenarios {
		for _, v := range variants {
			if c := rep.Cell(v, s); c != nil && !slices.Contains(refs, CellRef{v, s, c.Pass, c.Mark()}) {
				refs = append(refs, CellRef{Variant: v, Scenario: s, Pass: c.Pass, Mark: c.Mark()})
			}
		}
	}
	return refs
}
