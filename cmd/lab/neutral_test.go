package main

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"idemlab/lab/report"
	"idemlab/workshop"
)

// neutralWhy is why the neutral cells below could not judge their handler.
const neutralWhy = "the fault 'before the UPDATE of accounts' never fired: the handler ran no such statement"

// neutralReport is testReport with a row that credits by a trigger: its
// Duplicate holds, and its Race could not judge it (the cell is neutral:
// Pass is true, Neutral says why), with one interleaving of each kind.
func neutralReport() *report.Report {
	rep := testReport()
	rep.Variants = append(rep.Variants, report.VariantResults{Name: "naive/trigger", Mistake: "credits by a trigger",
		Results: map[string]*report.Cell{
			"Duplicate": {Pass: true, Detail: "applied once"},
			"Race": {Pass: true, Neutral: neutralWhy, Detail: neutralWhy, Lines: []report.Line{{Session: "A", Text: "deliver", Kind: report.KindNote},
				{Text: "CANNOT JUDGE: the fault 'before the UPDATE of accounts' never fired", Kind: report.KindRemark}},
				Permutations: []report.Permutation{
					{Schedule: "A1 B1", Outcome: "A applied, B duplicate; balance 500", Neutral: neutralWhy},
					{Schedule: "B1 A1", Outcome: "B applied, A duplicate; balance 500"},
				}},
		}})
	return rep
}

// TestNeutralRendered holds every renderer of a cell to the neutral
// verdict: its own mark, never ✓ (the cell's Pass is true) and never ✗,
// its reason where the renderer shows evidence, and a line of at most 100
// columns. The wrong renderings it rejects are the ones that read Pass
// alone.
func TestNeutralRendered(t *testing.T) {
	rep := neutralReport()
	matrix := renderMatrix(rep, true)
	if !strings.Contains(matrix, "naive/trigger      ✓ ○\n") {
		t.Errorf("renderMatrix(a neutral cell) =\n%s\nwant the row naive/trigger ✓ ○", matrix)
	}
	if !strings.Contains(matrix, "○ could not judge it") {
		t.Errorf("renderMatrix(a neutral cell) =\n%s\nwant the key to say what ○ is", matrix)
	}
	if !strings.Contains(strings.Join(strings.Fields(matrix), " "), "[4] ○ naive/trigger × Race could not judge it: "+neutralWhy) {
		t.Errorf("renderMatrix(a neutral cell, -evidence) =\n%s\nwant a footnote with why", matrix)
	}

	row, _ := renderRow(rep, "naive/trigger")
	if !strings.Contains(row, "○ Race") || strings.Contains(row, "✓ Race") {
		t.Errorf("renderRow(naive/trigger) =\n%s\nwant Race marked ○", row)
	}
	column, _ := renderColumn(rep, "Race")
	if !strings.Contains(column, "○ naive/trigger") {
		t.Errorf("renderColumn(Race) =\n%s\nwant naive/trigger marked ○", column)
	}

	explain, err := renderExplain(rep, "naive/trigger", "Race")
	if err != nil {
		t.Fatalf("renderExplain(naive/trigger, Race) error = %v", err)
	}
	for _, want := range []string{"naive/trigger × Race: NEUTRAL (could not judge the handler)\n", "why: " + neutralWhy, "CANNOT JUDGE: "} {
		if !strings.Contains(explain, want) {
			t.Errorf("renderExplain(naive/trigger, Race) =\n%s\nwant it to say %q", explain, want)
		}
	}
	if strings.Contains(explain, "PASS") || strings.Contains(explain, "FAIL") || strings.Contains(explain, "failures:") {
		t.Errorf("renderExplain(naive/trigger, Race) =\n%s\nwant neither a PASS nor a FAIL", explain)
	}

	perms, err := renderPermutations(rep, "naive/trigger", false)
	if err != nil {
		t.Fatalf("renderPermutations(naive/trigger) error = %v", err)
	}
	for _, want := range []string{"○ A applied, B duplicate; balance 500 — could not judge it: " + neutralWhy,
		"✓ B applied, A duplicate; balance 500 (1 interleaving)", "naive/trigger: 0 of 2 interleavings break Race; 1 could not judge it"} {
		if !strings.Contains(strings.Join(strings.Fields(perms), " "), want) {
			t.Errorf("renderPermutations(naive/trigger) =\n%s\nwant it to say %q", perms, want)
		}
	}

	data, err := renderJSON([]*report.Report{rep})
	if err != nil {
		t.Fatal(err)
	}
	var back report.Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if c := back.Cell("naive/trigger", "Race"); c == nil || c.Neutral != neutralWhy || c.Permutations[0].Neutral != neutralWhy || !strings.Contains(string(data), `"neutral": "`) {
		t.Errorf("renderJSON: naive/trigger × Race = %+v, want its neutral reason, and its interleaving's", c)
	}

	for name, out := range map[string]string{"matrix": matrix, "row": row, "column": column, "explain": explain, "permutations": perms} {
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > report.Width {
				t.Errorf("%s output has a line %d wide, want at most %d: %q", name, n, report.Width, line)
			}
		}
	}
}

// TestNeutralFootnotesAlone: a report whose only cells that are not ✓
// are neutral has no ✗ to list, and says so without claiming every
// guarantee held.
func TestNeutralFootnotesAlone(t *testing.T) {
	rep := neutralReport()
	rep.Variants = []report.VariantResults{rep.Variants[0], rep.Variants[3]}
	got := footnotes(rep)
	want := "Evidence\n" + report.Wrap("[1] ○ naive/trigger × Race could not judge it: "+neutralWhy, 4) +
		"no ✗: every cell that could judge its variant holds\n"
	if got != want {
		t.Errorf("footnotes(a neutral cell, no ✗) = %q, want %q", got, want)
	}
}

// TestBrowserNeutral opens the workshop page on a report with a neutral
// cell in a real browser: the cell shows ○ in a style of its own (not the
// pass's green nor the failure's red), the legend says what ○ is, and the
// cell's page says why it could not judge, with no ✓ on it.
func TestBrowserNeutral(t *testing.T) {
	path := chromium(t)
	h, err := workshop.Handler(&workshop.Data{Tabs: workshop.Finished(neutralReport())})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx := browser(t, path)
	neutral := `#matrix a[data-v="naive/trigger"][data-s="Race"]`
	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(neutral)))
	if got := text(t, ctx, neutral); got != report.Neutral {
		t.Errorf("the neutral cell shows %q, want %q", got, report.Neutral)
	}
	background := func(css string) string {
		return eval[string](t, ctx, `getComputedStyle(document.querySelector(`+"`"+css+"`"+`).parentElement).backgroundColor`)
	}
	n, pass, fail := background(neutral), background(`#matrix a[data-v="correct"][data-s="Race"]`),
		background(`#matrix a[data-v="naive/checkthenact"][data-s="Race"]`)
	if n == pass || n == fail || n == "rgba(0, 0, 0, 0)" {
		t.Errorf("the neutral cell's background = %s, the pass's %s, the failure's %s: want one of its own", n, pass, fail)
	}
	if legend := text(t, ctx, "p.legend"); !strings.Contains(legend, "○ could not judge it") {
		t.Errorf("the legend = %q, want it to say what ○ is", legend)
	}
	noOverflow(t, ctx, "the matrix with a neutral cell")
	do(t, ctx, chromedp.Click(chromedp.CSS(neutral)), chromedp.WaitVisible(chromedp.CSS("#neutral")))
	if got := text(t, ctx, "#neutral"); !strings.Contains(got, "Could not judge the handler: "+neutralWhy) {
		t.Errorf("the neutral cell's page says %q, want why it could not judge", got)
	}
	if h1 := text(t, ctx, "h1"); strings.Contains(h1, report.Pass) || !strings.Contains(h1, report.Neutral) {
		t.Errorf("the neutral cell's page heading = %q, want %s and no %s", h1, report.Neutral, report.Pass)
	}
}
