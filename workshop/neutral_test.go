package workshop

import (
	"net/http/httptest"
	"strings"
	"testing"

	"idemlab/lab/report"
)

// TestNeutralCellPage holds the page to the neutral verdict: a cell that
// could not judge its handler (Pass true, Neutral set) is shown with its
// own mark and style, never as ✓ or ✗, in the matrix, on its own page
// (with why), and in the claims; the legend says what the mark is. The
// wrong pages it rejects are the ones that read Pass alone.
func TestNeutralCellPage(t *testing.T) {
	const why = "the fault 'before the UPDATE of accounts' never fired: the handler ran no such statement"
	d := testData(t)
	rep := reportOf(d)
	rep.Variants = append(rep.Variants, report.VariantResults{Name: "naive/trigger", Mistake: "credits by a trigger",
		Results: map[string]*report.Cell{"Race": {Pass: true, Neutral: why, Detail: why, Lines: []report.Line{{Session: "A", Text: "deliver provider-a/evt-3", Kind: report.KindNote}}}}})
	d.Claims = strings.Replace(d.Claims, "`naive/checkthenact`", "`naive/checkthenact`, `naive/trigger`", 1)
	h, err := Handler(d)
	if err != nil {
		t.Fatal(err)
	}
	get := func(url string) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", url, nil))
		if w.Code != 200 {
			t.Fatalf("GET %s = %d %s", url, w.Code, w.Body.String())
		}
		return w.Body.String()
	}
	matrix := get("/")
	cell := `<td class="neutral"><a href="/cell?b=sqlite&amp;v=naive%2ftrigger&amp;s=Race" data-v="naive/trigger" data-s="Race" data-pass="true" data-verdict="neutral" title="naive/trigger × Race: could not judge it: ` +
		strings.ReplaceAll(why, "'", "&#39;") + `">○</a></td>`
	if !strings.Contains(matrix, cell) {
		t.Errorf("GET / does not show naive/trigger × Race as %s:\n%s", cell, matrix)
	}
	if !strings.Contains(matrix, `<span class="neutral">○</span> could not judge it`) {
		t.Errorf("GET /: the legend does not say what ○ is:\n%s", matrix)
	}
	page := get("/cell?v=naive/trigger&s=Race")
	for _, want := range []string{`<h1><span class="neutral">○</span> naive/trigger × Race`, `<p class="evidence neutral" id="neutral"><b>○ Could not judge the handler:</b> ` +
		strings.ReplaceAll(why, "'", "&#39;")} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /cell?v=naive/trigger&s=Race lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "✓") || strings.Contains(page, "Broken guarantees") {
		t.Errorf("GET /cell?v=naive/trigger&s=Race shows a ✓ or broken guarantees:\n%s", page)
	}
	if claims := get("/claims"); !strings.Contains(claims, `<span class="neutral">○</span> naive/trigger × Race`) {
		t.Errorf("GET /claims does not mark naive/trigger × Race ○:\n%s", claims)
	}
}
