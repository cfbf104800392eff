package workshop

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"idemlab/lab/report"
)

// fixture is the stepper file TestStepper keeps current in
// testdata/race.json: correct and naive/checkthenact in Race.
func fixture(t *testing.T) *report.Stepper {
	t.Helper()
	st, err := ReadStepper("testdata/race.json")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func testData(t *testing.T) *Data {
	st := fixture(t)
	rep := report.New([]report.ScenarioInfo{{Name: "Race", Short: "Race", Shows: "two at once", Claims: "C3"}},
		[]report.VariantResults{{Name: "correct"}, {Name: "naive/checkthenact", Mistake: "check, then act"}})
	rep.Set("correct", "Race", &report.Cell{Pass: true, Detail: "ok", Lines: []report.Line{
		{Session: "A", Step: 1, Text: "BEGIN IMMEDIATE", Result: "-> ok", Kind: report.KindStatement},
		{Session: "B", Step: 1, Text: "BEGIN IMMEDIATE", Result: "<waiting>", Kind: report.KindWait},
		{Session: "A", Step: 2, Text: "COMMIT", Result: "-> ok", Kind: report.KindStatement},
		{Session: "B", Step: 1, Text: "BEGIN IMMEDIATE", Result: "-> ok", Kind: report.KindStatement}}})
	rep.Set("naive/checkthenact", "Race", &report.Cell{Detail: "credited twice", Failures: []string{"balance of account 1 = 1000, want 500"}})
	return &Data{Tabs: Finished(rep), Stepper: st, Diffs: map[string]string{"naive/checkthenact": "diff --git a/x b/x\n--- correct/process.go\n+++ naive/checkthenact/process.go\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n"},
		Claims: "## C1–C26\n\n### C3. Check-then-act credits twice\nTwo deliveries both read.\n\nShown by: scenario `Race`; `naive/checkthenact`\n"}
}

// reportOf is the report of d's first tab.
func reportOf(d *Data) *report.Report { return d.Tabs.tabs[0].Report }

// TestPlayShortestBreak plays checkthenact's shortest breaking schedule at
// the line prompt, undoes a step, and quits; every line fits 100 columns.
func TestPlayShortestBreak(t *testing.T) {
	tree := fixture(t).Tree("naive/checkthenact", "Race")
	var out strings.Builder
	if err := Play(strings.NewReader("a\nb\nx\na\nb\na\nb\nu\nb\nq\n"), &out, tree); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"Make naive/checkthenact credit twice", `"X" cannot step now`,
		"✗ a guarantee broke", "balance of account 1 = 1000, want 500", "schedule: A1 B1 A2 B2 A3 B3", "level won."} {
		if !strings.Contains(got, want) {
			t.Errorf("Play output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "level won.") != 2 {
		t.Errorf("after undo and the same step again the level should be won twice:\n%s", got)
	}
	// On a terminal the student's Enter ends the prompt's line; here the
	// input is not echoed, so what follows a prompt starts a line of its own.
	for _, line := range strings.Split(strings.ReplaceAll(got, "] > ", "] >\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("line of %d columns, want at most %d: %q", n, width, line)
		}
	}
}

// afterTheEnd is what the stepper must say when input follows a won level
// (playedPastTheEnd): the verdict once, then one line per extra input.
func afterTheEnd(out string) error {
	if n := strings.Count(out, "level won."); n != 1 {
		return fmt.Errorf("level won. told %d times, want once", n)
	}
	if n := strings.Count(out, "the race is over: u to undo, r to restart, q to quit\n"); n != 3 {
		return fmt.Errorf("the race is over told %d times, want 3 (x, an empty line, a)", n)
	}
	if strings.Contains(out, "cannot step now") {
		return fmt.Errorf("an input after the end is told it cannot step now, want that the race is over")
	}
	return nil
}

// playedPastTheEnd wins the level, then types x, an empty line and a.
const playedPastTheEnd = "a\nb\na\nb\na\nb\nx\n\na\nq\n"

// TestPlayAfterTheEnd types past a won level: the verdict is not repeated,
// each extra input gets one line saying what can be done. The output of
// the stepper that repeated the verdict on every input is kept as the case
// the check must reject (testdata/play-reprints-the-end.txt, from
// playedPastTheEnd).
func TestPlayAfterTheEnd(t *testing.T) {
	var out strings.Builder
	if err := Play(strings.NewReader(playedPastTheEnd), &out, fixture(t).Tree("naive/checkthenact", "Race")); err != nil {
		t.Fatal(err)
	}
	if err := afterTheEnd(out.String()); err != nil {
		t.Errorf("Play(%q): %v:\n%s", playedPastTheEnd, err, out.String())
	}
	old, err := os.ReadFile("testdata/play-reprints-the-end.txt")
	if err != nil {
		t.Fatal(err)
	}
	if afterTheEnd(string(old)) == nil {
		t.Errorf("afterTheEnd accepts the stepper that repeats the verdict on every input")
	}
}

// TestPlayCorrectCannotBeWon tries every branch of correct and expects the
// page's verdict: none breaks it, and why.
func TestPlayCorrectCannotBeWon(t *testing.T) {
	tree := fixture(t).Tree("correct", "Race")
	// Every schedule, each followed by a restart.
	var input strings.Builder
	for _, l := range tree.Leaves {
		for _, step := range strings.Fields(l.Schedule) {
			input.WriteString(strings.ToLower(step[:1]) + "\n")
		}
		input.WriteString("r\n")
	}
	var out strings.Builder
	if err := Play(strings.NewReader(input.String()+"q\n"), &out, tree); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "broke") || !strings.Contains(got, "Every branch tried. None of the 8 schedules breaks correct") {
		t.Errorf("after every branch of correct:\n%s", got)
	}
	if !strings.Contains(got, "waiting B1 on A") {
		t.Errorf("B's BEGIN IMMEDIATE never shown waiting on A:\n%s", got)
	}
}

// TestHandlerRefuses checks the server's bounds: unknown names, missing
// parameters, long queries and bodies get a 4xx that says what to do.
func TestHandlerRefuses(t *testing.T) {
	h, err := Handler(testData(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		method, url string
		code        int
		says        string
	}{
		{"GET", "/", 200, "naive/checkthenact"},
		{"GET", "/cell?v=naive/checkthenact&s=Race", 200, "balance of account 1 = 1000"},
		{"GET", "/cell?v=correct&s=Race", 200, "waitbar"},
		{"GET", "/diff?v=naive/checkthenact", 200, "new"},
		{"GET", "/claims", 200, "naive/checkthenact × Race"},
		{"GET", "/step?v=correct&s=Race", 200, "cannot be won"},
		{"GET", "/tree?v=naive/checkthenact&s=Race", 200, "A1 B1 A2 B2 A3 B3"},
		{"GET", "/cell?v=naive/nosuch&s=Race", 404, "variants are: correct, naive/checkthenact"},
		{"GET", "/cell?v=correct", 400, "missing parameter s"},
		{"GET", "/cell?v=correct&s=Nope", 404, "scenarios are: Race"},
		{"GET", "/tree?v=correct&s=Duplicate", 404, "Race and ConflictRace"},
		{"GET", "/diff?v=correct", 404, "correct is what the others are compared with"},
		{"GET", "/cell?v=" + strings.Repeat("x", 600), 414, "query longer"},
		{"POST", "/cell?v=correct&s=Race", 405, ""},
		{"GET", "/nosuch", 404, ""},
	} {
		var body *strings.Reader = strings.NewReader("")
		r := httptest.NewRequest(tt.method, tt.url, body)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.says) {
			t.Errorf("%s %s = %d %.200q, want %d and %q", tt.method, tt.url, w.Code, w.Body.String(), tt.code, tt.says)
		}
	}
}

// TestTreeServedFast measures what a stepper page costs the server: the
// tree is precomputed, so serving it is encoding JSON.
func TestTreeServedFast(t *testing.T) {
	h, err := Handler(testData(t))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/tree?v=naive/checkthenact&s=Race", nil))
	if w.Code != http.StatusOK {
		t.Fatal(w.Code)
	}
	t.Logf("tree of %d bytes served in %v", w.Body.Len(), time.Since(start))
}

// TestLanesOf draws a transcript's lines as they were logged: a row per
// line, a remark of several lines a row per line (the mark of a broken
// guarantee on its first), a newline in a statement written \n as the
// terminal writes it, and a bar in the lane of a session that waits for
// the lock, from its wait to its statement's result.
func TestLanesOf(t *testing.T) {
	lines := []report.Line{
		{Session: "A", Text: "deliver e", Kind: report.KindNote},
		{Session: "A", Step: 1, Text: "SELECT 1", Result: "-> no row", Kind: report.KindStatement},
		{Session: "B", Step: 1, Text: "BEGIN IMMEDIATE", Result: "<waiting>", Kind: report.KindWait},
		{Session: "A", Step: 2, Text: "SELECT 'a\nb'", Result: "-> 1 row", Kind: report.KindStatement},
		{Session: "B", Step: 1, Text: "BEGIN IMMEDIATE", Result: "-> ok", Kind: report.KindStatement},
		{Text: "FAIL: balance\n  of account 1\n", Kind: report.KindFail},
	}
	type row struct{ raw, label, kind, lanes string }
	want := []row{
		{"A: deliver e", "A", report.KindNote, "A."},
		{"A1: SELECT 1  -> no row", "A1", report.KindStatement, "A."},
		{"B1: BEGIN IMMEDIATE  <waiting>", "B1", report.KindWait, ".B"},
		{`A2: SELECT 'a\nb'  -> 1 row`, "A2", report.KindStatement, "Aw"},
		{"B1: BEGIN IMMEDIATE  -> ok", "B1", report.KindStatement, ".B"},
		{"FAIL: balance", "", report.KindFail, ".."},
		{"  of account 1", "", report.KindRemark, ".."},
	}
	lanes := LanesOf(lines)
	if strings.Join(lanes.Sessions, " ") != "A B" {
		t.Errorf("LanesOf(…).Sessions = %v, want [A B]", lanes.Sessions)
	}
	var got []row
	for _, r := range lanes.Rows {
		cells := ""
		for i, c := range r.Cells {
			switch {
			case c.Here:
				cells += lanes.Sessions[i]
			case c.Waiting:
				cells += "w"
			default:
				cells += "."
			}
		}
		got = append(got, row{r.Raw, r.Label, r.Kind, cells})
	}
	if !slices.Equal(got, want) {
		t.Errorf("LanesOf(…) rows =\n%q\nwant\n%q", got, want)
	}
}

// TestPlayShowsTheDatabase plays checkthenact's shortest break and correct's
// first steps at the line prompt: after each move the database as the
// engine recorded it — the balance going 0 → 500 at A2 and 500 → 1000 at
// B2, where the double credit is called out, what each session read, the
// write lock and its waiter, the writes not committed yet — and every
// statement whole, folded at spaces, never cut.
func TestPlayShowsTheDatabase(t *testing.T) {
	var out strings.Builder
	if err := Play(strings.NewReader("a\nb\na\nb\na\nq\n"), &out, fixture(t).Tree("naive/checkthenact", "Race")); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"  db: account 1: balance 0\n      inbox: no row\n      write lock: free\n",
		"      read: A1 inbox: no row\n",
		"  db: account 1: balance 0 → 500 (A2)  (500 of it has no inbox row yet)\n",
		"  db: account 1: balance 500 → 1000 (B2)  ✗ credited twice here: exactly once allows at most 500\n",
		"  db: account 1: balance 1000  ✗ credited twice at B2: exactly once allows at most 500\n      inbox: provider-a/evt-3 → account 1, 500\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Play output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "…") || strings.Count(got, "'evt-3'") < 8 {
		t.Errorf("Play cuts a statement short (or loses its key):\n%s", got)
	}
	out.Reset()
	if err := Play(strings.NewReader("a\nb\na\nq\n"), &out, fixture(t).Tree("correct", "Race")); err != nil {
		t.Fatal(err)
	}
	got = out.String()
	for _, want := range []string{"      write lock: held by A\n", "      write lock: held by A; B waiting\n",
		"      not committed, seen by no other session: A2 INSERT inbox (1 row)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("Play of correct lacks %q:\n%s", want, got)
		}
	}
}

// TestDiffLesson: the first hunk that changes code is the lesson; a hunk
// before it that changes only the package clause and imports is noise.
func TestDiffLesson(t *testing.T) {
	d := ParseDiff("diff --git correct/process.go naive/x/process.go\n--- correct/process.go\n+++ naive/x/process.go\n" +
		"@@ -1,4 +1,5 @@\n-package correct\n+package x\n \n import (\n+\t\"errors\"\n \t\"context\"\n" +
		"@@ -20,3 +21,3 @@ func (h *Handler) Process(\n \tctx := 1\n-\ttx.Exec(a)\n+\th.db.Exec(a)\n")
	var marks []string
	for _, r := range d.Files[0].Rows {
		if r.Hunk != "" {
			marks = append(marks, fmt.Sprintf("lesson=%v noise=%v", r.Lesson, r.Noise))
		}
	}
	if got := strings.Join(marks, "; "); got != "lesson=false noise=true; lesson=true noise=false" {
		t.Errorf("ParseDiff hunks: %s, want the package hunk noise and the Process hunk the lesson", got)
	}
}

// TestClaimsMarkdown: the claims page renders CLAIMS.md's Markdown, so a
// name in backticks is code and no backtick is left.
func TestClaimsMarkdown(t *testing.T) {
	h, err := Handler(testData(t))
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/claims", nil))
	body := w.Body.String()
	if strings.Contains(body, "`") || !strings.Contains(body, "<code>Race</code>") || !strings.Contains(body, "<code>naive/checkthenact</code>") {
		t.Errorf("GET /claims = %s\nwant the Markdown rendered: code, no backticks", body)
	}
}

// TestStepperOnItsWay asks for the stepper before its trees have come: the
// page says how far their export is, in the page's own layout, and reloads
// itself (no bare error); once they come, the same address is the stepper.
// An export that failed says why and stops reloading.
func TestStepperOnItsWay(t *testing.T) {
	d := testData(t)
	st := d.Stepper
	d.Stepper = nil
	h, err := Handler(d)
	if err != nil {
		t.Fatal(err)
	}
	get := func(url string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", url, nil))
		return w
	}
	const url = "/step?v=naive/checkthenact&s=Race"
	d.StepperProgress("exporting every schedule of the two races: 3 of 32 trees")
	w := get(url)
	body := w.Body.String()
	for _, want := range []string{"Getting the stepper ready:", "3 of 32 trees", `http-equiv="refresh" content="2"`,
		`<nav><a href="/">Matrix</a>`, "/static/lab.css"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET %s before the trees = %d, body lacks %q:\n%s", url, w.Code, want, body)
		}
	}
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "2" ||
		!strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Errorf("GET %s before the trees = %d, Retry-After %q, %s; want 503, 2 and a page",
			url, w.Code, w.Header().Get("Retry-After"), w.Header().Get("Content-Type"))
	}
	if w := get("/tree?v=naive/checkthenact&s=Race"); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "3 of 32 trees") {
		t.Errorf("GET /tree before the trees = %d %q, want 503 and how far the export is", w.Code, w.Body.String())
	}

	d.SetStepper(st)
	if w := get(url); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="stepper"`) {
		t.Errorf("GET %s once the trees came = %d, want 200 and the stepper:\n%s", url, w.Code, w.Body.String())
	}

	d.SetStepper(nil)
	d.StepperFailed(fmt.Errorf("go test wrote no stepper file"))
	w = get(url)
	if body := w.Body.String(); w.Code != http.StatusServiceUnavailable || !strings.Contains(body, "could not be made:</b> go test wrote no stepper file") ||
		strings.Contains(body, "refresh") || w.Header().Get("Retry-After") != "" {
		t.Errorf("GET %s after a failed export = %d, Retry-After %q:\n%s\nwant the failure said, and no reload",
			url, w.Code, w.Header().Get("Retry-After"), body)
	}
}
