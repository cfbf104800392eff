package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"idemlab/lab/report"
	"idemlab/workshop"
)

// The browser tests drive the workshop page in Debian's headless Chromium,
// as a room would use it: they load the matrix, open a cell, play a race by
// clicking, undo, and try every branch of correct. They are opt-in, like
// the PostgreSQL suite: they run with IDEMLAB_BROWSER=1 (as CI sets it),
// where a missing chromium fails them, so that CI cannot pass by skipping,
// and otherwise skip with one line. Starting a browser four times costs
// half a minute, which go test ./... should not spend on every run.
//
// -web.screenshots=DIR (relative to the module root) saves the matrix, a
// stepped race (at its end, and at B2 where the database panel shows the
// second credit move the balance), the PostgreSQL and MariaDB tabs and the
// claims at 1280×720; the pictures in docs/ are regenerated with
//
//	IDEMLAB_BROWSER=1 go test ./cmd/lab -count=1 -web.full -web.screenshots=docs \
//	    -run 'TestBrowser(Matrix|Stepper|StepperDatabase|Backends|Claims)$'

var (
	screenshots = flag.String("web.screenshots", "", "save the browser tests' screenshots (1280×720 PNG) into `dir`")
	fullMatrix  = flag.Bool("web.full", false, "serve the whole matrix (a full go test ./scenarios run) instead of the cells the browser tests use")
)

// browserFlags are the flags headless Chromium needs as root on a closed
// network: without the background-networking flags it floods refused
// connections; a fresh user-data-dir is added per test.
var browserFlags = []chromedp.ExecAllocatorOption{
	chromedp.Flag("headless", true),
	chromedp.NoSandbox,
	chromedp.DisableGPU,
	chromedp.Flag("disable-quic", true),
	chromedp.NoFirstRun,
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.WindowSize(1280, 720),
}

// The viewport every test and screenshot uses: a projector's 1280×720, the
// page's own size, whatever the window around it (headless Chromium's
// window size leaves a smaller viewport).
const viewW, viewH = 1280, 720

// chromium returns the browser's path, skips the test without
// IDEMLAB_BROWSER=1, and fails it when the variable is set but chromium is
// missing. Tests call it first, before anything slow.
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("IDEMLAB_BROWSER") != "1" {
		t.Skip("the browser tests are opt-in: IDEMLAB_BROWSER=1 go test ./cmd/lab -run TestBrowser (needs apt-get install -y chromium)")
	}
	path := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Fatal("IDEMLAB_BROWSER=1 but chromium is not installed: apt-get install -y chromium")
	}
	return path
}

// browser starts Chromium for one test. Its time limit starts here.
func browser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(slices.Clone(browserFlags), chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.EmulateViewport(viewW, viewH)); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

var (
	siteOnce   sync.Once
	siteData   *workshop.Data
	siteReport *report.Report // the SQLite tab's
	siteErr    error
)

// site serves the workshop from one go test run of the scenarios: the
// cells of Race for correct and naive/checkthenact (or the whole matrix with
// -web.full) and their stepper trees.
func site(t *testing.T) (*httptest.Server, *workshop.Data, *report.Report) {
	t.Helper()
	siteOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			siteErr = err
			return
		}
		dir, err := os.MkdirTemp("", "idemlab-browser-")
		if err != nil {
			siteErr = err
			return
		}
		defer os.RemoveAll(dir)
		stepperPath := filepath.Join(dir, "stepper.json")
		run := "^(" + matrixTest + "|" + stepperTest + ")$/^Race$/^(correct|naive)$/^(checkthenact)?$"
		if *fullMatrix {
			run = "^(" + matrixTest + "|" + stepperTest + ")$"
		}
		reps, out, _ := runTests(root, tests{pkg: "./scenarios", run: run, flags: []string{"-lab.stepper=" + stepperPath}}, nil)
		if reps == nil {
			siteErr = fmt.Errorf("the scenario tests wrote no report:\n%s", out)
			return
		}
		siteReport = reps[0]
		siteData, siteErr = webData(root, reps[0], stepperPath)
		if siteErr != nil {
			return
		}
		// The tabs as go run ./cmd/lab web shows them without a server:
		// SQLite's run, the servers' levels recorded.
		siteData.Tabs, siteErr = webTabs(root, nil)
		if siteErr == nil {
			siteData.Tabs.Update("sqlite", func(tab *workshop.Tab) { tab.Report, tab.Done = reps[0], true })
		}
	})
	if siteErr != nil {
		t.Fatal(siteErr)
	}
	h, err := workshop.Handler(siteData)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, siteData, siteReport
}

// do runs actions in the page, stopping the test on an error.
func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// text is the text of the element css selects, "" if there is none.
func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	return eval[string](t, ctx, `(document.querySelector(`+"`"+css+"`"+`) || {}).textContent || ""`)
}

// click clicks the element css selects.
func click(t *testing.T, ctx context.Context, css string) {
	t.Helper()
	do(t, ctx, chromedp.Click(chromedp.CSS(css)))
}

// shot saves a screenshot of the viewport when -web.screenshots is set.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	dir := *screenshots
	if !filepath.IsAbs(dir) {
		// Relative to the module root, not to cmd/lab where go test runs.
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, dir)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, len(png))
}

// noOverflow fails unless the page fits the window's width.
func noOverflow(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	scroll := eval[int](t, ctx, `document.documentElement.scrollWidth`)
	client := eval[int](t, ctx, `document.documentElement.clientWidth`)
	if scroll > client {
		t.Errorf("%s at 1280×720: the page is %d px wide in a %d px window: it scrolls sideways", what, scroll, client)
	}
}

func TestBrowserMatrix(t *testing.T) {
	path := chromium(t)
	srv, _, rep := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#matrix")))
	cells := eval[int](t, ctx, `document.querySelectorAll("#matrix td a").length`)
	loadMs := eval[float64](t, ctx, `performance.getEntriesByType("navigation")[0].loadEventEnd`)
	want := 0
	for _, v := range rep.Variants {
		want += len(v.Results)
	}
	if cells != want {
		t.Errorf("matrix page links %d cells, want the report's %d", cells, want)
	}
	t.Logf("matrix page loaded in %.0f ms", loadMs)
	noOverflow(t, ctx, "the matrix")
	shot(t, ctx, "workshop-matrix.png")
}

// TestBrowserCell opens a cell from the matrix and reads its swimlanes
// back: their lines, in order, are the transcript explain prints.
func TestBrowserCell(t *testing.T) {
	path := chromium(t)
	srv, _, rep := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(chromedp.CSS(`#matrix a[data-v="naive/checkthenact"][data-s="Race"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.lanes")))
	lines := eval[[]string](t, ctx, `[...document.querySelectorAll("table.lanes tbody tr")].map(r => r.dataset.line)`)
	explain, err := renderExplain(rep, "naive/checkthenact", "Race")
	if err != nil {
		t.Fatal(err)
	}
	_, transcript, ok := strings.Cut(explain, "transcript:\n")
	if !ok {
		t.Fatalf("explain printed no transcript:\n%s", explain)
	}
	// The transcript wraps a long line onto lines indented under it: the
	// swimlanes have a row for each line that starts at the margin, and
	// show the same words in the same order.
	transcript, _, _ = strings.Cut(transcript, "the same run as a test:")
	var starts []string
	for _, l := range strings.Split(transcript, "\n") {
		if l != "" && !strings.HasPrefix(l, " ") {
			starts = append(starts, l)
		}
	}
	got := strings.Join(lines, "\n")
	if len(lines) != len(starts) || !slices.Equal(strings.Fields(got), strings.Fields(transcript)) ||
		!strings.Contains(got, "schedule: A1 B1 A2 B2 A3 B3") {
		t.Errorf("the swimlanes show %d rows:\n%s\nexplain prints %d lines at the margin:\n%s", len(lines), got, len(starts), transcript)
	}
}

// TestBrowserStepper plays the shortest breaking schedule of
// naive/checkthenact by clicking, sees the double credit, undoes the last
// step and plays it again from the keyboard.
func TestBrowserStepper(t *testing.T) {
	path := chromium(t)
	srv, _, _ := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	schedule := "A1 B1 A2 B2 A3 B3"
	do(t, ctx, chromedp.Navigate(srv.URL+"/step?v=naive/checkthenact&s=Race"),
		chromedp.WaitVisible(chromedp.CSS(`#stepper[data-ready="1"]`)))
	slowest := 0.0
	for _, step := range strings.Fields(schedule) {
		session := step[:1]
		next := text(t, ctx, `[data-session="`+session+`"] p b`)
		click(t, ctx, "#step-"+session)
		ms := eval[float64](t, ctx, `window.lastMoveMs`)
		if next != step {
			t.Errorf("before clicking %s, session %s shows its next step as %q", step, session, next)
		}
		slowest = max(slowest, ms)
	}
	end, final := text(t, ctx, "#end"), text(t, ctx, "#final-schedule")
	if !strings.Contains(end, "A guarantee broke") || !strings.Contains(end, "balance of account 1 = 1000, want 500") {
		t.Errorf("after %s the page says:\n%s\nwant the double credit (balance 1000, want 500)", schedule, end)
	}
	if final != schedule {
		t.Errorf("final schedule = %q, want %q", final, schedule)
	}
	shot(t, ctx, "workshop-stepper.png")
	noOverflow(t, ctx, "the stepped race")

	click(t, ctx, "#undo")
	end, sched := text(t, ctx, "#end"), text(t, ctx, "#schedule")
	if strings.TrimSpace(end) != "" || sched != "schedule: A1 B1 A2 B2 A3" {
		t.Errorf("after undo: schedule %q, end %q; want schedule: A1 B1 A2 B2 A3 and no outcome", sched, end)
	}
	// Undone by the keyboard, redone by the keyboard.
	do(t, ctx, chromedp.KeyEvent("u"), chromedp.KeyEvent("a"), chromedp.KeyEvent("b"))
	final = text(t, ctx, "#final-schedule")
	if final != schedule {
		t.Errorf("after u, a, b on the keyboard: schedule %q, want %q", final, schedule)
	}
	t.Logf("slowest move: %.1f ms (drawn in the page, the tree already loaded)", slowest)
	if slowest > 200 {
		t.Errorf("a move took %.0f ms to draw, want under 200", slowest)
	}
}

// TestBrowserCorrectCannotBeBroken walks every branch of correct × Race by
// clicking, depth first, and requires that none breaks a guarantee, that a
// waiting session cannot be chosen, and that the page then says why the
// level cannot be won.
func TestBrowserCorrectCannotBeBroken(t *testing.T) {
	path := chromium(t)
	srv, data, _ := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	tree := data.Stepper.Tree("correct", "Race")
	if tree == nil {
		t.Fatal("no tree for correct × Race")
	}
	do(t, ctx, chromedp.Navigate(srv.URL+"/step?v=correct&s=Race"),
		chromedp.WaitVisible(chromedp.CSS(`#stepper[data-ready="1"]`)))
	leaves, sawWaiting := 0, false
	var walk func(depth int)
	walk = func(depth int) {
		if t.Failed() || depth > 40 {
			return
		}
		ready := eval[[]string](t, ctx, `[...document.querySelectorAll(".stepbtn:not([disabled])")].map(b => b.id.slice(5))`)
		waiting := eval[[]string](t, ctx, `[...document.querySelectorAll(".stepbtn[disabled]")].map(b => b.textContent)`)
		end := text(t, ctx, "#end")
		if len(waiting) > 0 {
			sawWaiting = true
			for _, w := range waiting {
				if !strings.HasPrefix(w, "Waiting on ") {
					t.Errorf("a disabled session reads %q, want it to say whom it waits on", w)
				}
			}
		}
		if len(ready) == 0 {
			leaves++
			if strings.Contains(end, "broke") {
				t.Errorf("correct broke: %s", end)
			}
			return
		}
		for _, s := range ready {
			click(t, ctx, "#step-"+s)
			walk(depth + 1)
			click(t, ctx, "#undo")
		}
	}
	walk(0)
	if leaves != len(tree.Leaves) {
		t.Errorf("clicked through %d schedules, want all %d", leaves, len(tree.Leaves))
	}
	if !sawWaiting {
		t.Error("no session was ever shown waiting: correct's second BEGIN IMMEDIATE should wait")
	}
	why := text(t, ctx, "#unbreakable")
	if !strings.Contains(why, "Every branch tried") || !strings.Contains(why, "BEGIN IMMEDIATE") {
		t.Errorf("after every branch the page says %q, want why correct cannot be broken", why)
	}
}

// TestBrowserBackends switches from the SQLite tab to each PostgreSQL and
// MariaDB tab from the keyboard, as the page stands without a server
// (recorded verdicts), and checks every cell shown against the golden
// file, the banner that says it is a record of its server's tests, the
// heading that names the backend whole, the width at 1280×720, and that
// the eight tabs stay on one line.
func TestBrowserBackends(t *testing.T) {
	path := chromium(t)
	srv, _, _ := site(t) // before the browser: its time limit starts with it
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#matrix")))
	for _, b := range backends[1:] {
		golden, err := os.ReadFile(filepath.Join(root, b.golden))
		if err != nil {
			t.Fatal(err)
		}
		want, err := report.ParseReport(string(golden))
		if err != nil {
			t.Fatal(err)
		}
		// The tab is a link: focus it and press Enter, as a keyboard does.
		do(t, ctx, chromedp.Focus(chromedp.CSS(`#tabs a[data-b="`+b.flag+`"]`)), chromedp.KeyEvent("\r"),
			chromedp.WaitVisible(chromedp.CSS(`#tabs a[data-b="`+b.flag+`"][aria-current="page"]`)))
		if got := text(t, ctx, "#state"); !strings.Contains(got, "Recorded, not run now") || !strings.Contains(got, b.golden) ||
			!strings.Contains(got, "which the "+b.srv.name+" tests check") {
			t.Errorf("%s tab: the banner says %q, want it called recorded, from %s, kept by the %s tests", b.name, got, b.golden, b.srv.name)
		}
		if got := text(t, ctx, "h1"); !strings.Contains(got, b.name) {
			t.Errorf("%s tab: the heading says %q, want the backend named whole", b.name, got)
		}
		cells := eval[[][]string](t, ctx, `[...document.querySelectorAll("#matrix td a")].map(a => [a.dataset.v, a.dataset.s, a.textContent])`)
		n := 0
		for _, v := range want.Variants {
			n += len(v.Results)
		}
		if len(cells) != n {
			t.Errorf("%s tab shows %d cells, want the golden file's %d", b.name, len(cells), n)
		}
		for _, c := range cells {
			wc := want.Cell(c[0], c[1])
			if wc == nil || c[2] != wc.Mark() {
				t.Errorf("%s tab: %s × %s shows %q, want %s's verdict %v", b.name, c[0], c[1], c[2], b.golden, wc)
			}
		}
		noOverflow(t, ctx, "the "+b.name+" tab")
		if lines := eval[int](t, ctx, `new Set([...document.querySelectorAll("#tabs a")].map(a => a.getBoundingClientRect().top)).size`); lines != 1 {
			t.Errorf("%s tab: the tabs take %d lines at 1280×720, want one", b.name, lines)
		}
		switch b.flag {
		case "pg-ser":
			shot(t, ctx, "workshop-postgres.png")
		case "mariadb-rr":
			shot(t, ctx, "workshop-mariadb.png")
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#tabs a").length`); n != len(backends) {
		t.Errorf("the page has %d tabs, want one per backend, %d", n, len(backends))
	}
}

// webData gathers what the pages show from one finished run: the report,
// the stepper's trees, every variant's diff against correct/ (as the diff
// subcommand prints it) and CLAIMS.md. The browser tests serve it; the command itself
// fills the page as the tests run (fillTabs).
func webData(root string, rep *report.Report, stepperPath string) (*workshop.Data, error) {
	st, err := workshop.ReadStepper(stepperPath)
	if err != nil {
		return nil, fmt.Errorf("reading the stepper's trees: %w", err)
	}
	claims, err := os.ReadFile(filepath.Join(root, "CLAIMS.md"))
	if err != nil {
		return nil, err
	}
	bench, err := report.ReadBench(filepath.Join(root, recordedBench))
	if err != nil {
		return nil, err
	}
	return &workshop.Data{Tabs: workshop.Finished(rep), Stepper: st, Diffs: webDiffs(), Claims: string(claims),
		Bench: bench, BenchFile: recordedBench}, nil
}

// stepTo plays schedule (a session letter per step) on the stepper page
// of variant × Race from its root.
func stepTo(t *testing.T, ctx context.Context, srv *httptest.Server, variant string, steps ...string) {
	t.Helper()
	do(t, ctx, chromedp.Navigate(srv.URL+"/step?v="+variant+"&s=Race"),
		chromedp.WaitVisible(chromedp.CSS(`#stepper[data-ready="1"]`)))
	for _, s := range steps {
		click(t, ctx, "#step-"+s)
	}
}

// balanceCell is what the database panel shows of account 1's balance.
type balanceCell struct {
	Text    string `json:"text"`
	Balance string `json:"balance"`
	Class   string `json:"class"`
}

func balance(t *testing.T, ctx context.Context) balanceCell {
	t.Helper()
	return eval[balanceCell](t, ctx, `(() => { const td = document.querySelector('#db tr[data-account="1"] td.balance');
		return td ? {text: td.textContent, balance: td.dataset.balance, class: td.className} : {}; })()`)
}

// TestBrowserStepperDatabase steps naive/checkthenact's shortest break and
// reads the database panel at each step: the balance goes 0 → 500 at A2
// and 500 → 1000 at B2, where the panel and the transcript mark the
// double credit; what each session read; and, stepping correct, who holds
// the write lock, who waits for it, and what is not committed yet.
func TestBrowserStepperDatabase(t *testing.T) {
	path := chromium(t)
	srv, _, _ := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	stepTo(t, ctx, srv, "naive/checkthenact")
	if b, lock, inbox := balance(t, ctx), text(t, ctx, "#lock"), text(t, ctx, "#inbox"); b.Balance != "0" || lock != "Write lock free" || inbox != "no row" {
		t.Errorf("before a step: balance %+v, %q, inbox %q; want 0, a free lock and no row", b, lock, inbox)
	}
	for _, step := range []struct {
		session, text, balance string
		moved, over, here      bool
		reads                  string
	}{
		{"A", "0", "0", false, false, false, "A1 inbox: no row"},
		{"B", "0", "0", false, false, false, "A1 inbox: no row|B1 inbox: no row"},
		{"A", "0 → 500 A2", "500", true, false, false, "A1 inbox: no row|B1 inbox: no row"},
		{"B", "500 → 1000 B2", "1000", true, true, true, "A1 inbox: no row|B1 inbox: no row"},
		{"A", "1000", "1000", false, true, false, "A1 inbox: no row|B1 inbox: no row"},
	} {
		click(t, ctx, "#step-"+step.session)
		sched := text(t, ctx, "#schedule")
		b := balance(t, ctx)
		reads := strings.Join(eval[[]string](t, ctx, `[...document.querySelectorAll("#reads li")].map(li => li.textContent)`), "|")
		if b.Text != step.text || b.Balance != step.balance || strings.Contains(b.Class, "moved") != step.moved ||
			strings.Contains(b.Class, "over") != step.over || strings.Contains(b.Class, "broke-here") != step.here || reads != step.reads {
			t.Errorf("%s: balance %+v, reads %q; want %q (%s), moved %v, over %v, broken here %v, reads %q",
				sched, b, reads, step.text, step.balance, step.moved, step.over, step.here, step.reads)
		}
	}
	// At B2 the panel says the guarantee broke there, and the transcript
	// marks B2's row; afterwards the panel says where it broke.
	click(t, ctx, "#undo")
	if got, row := text(t, ctx, "#broke"), eval[string](t, ctx, `[...document.querySelectorAll("#transcript tr.broke")].map(r => r.dataset.label).join(" ")`); !strings.Contains(got, "B2 credited account 1 a second time: 1000 is past the 500") || row != "B2" {
		t.Errorf("at B2: the panel says %q, transcript rows marked %q; want the second credit named at B2, and B2's row", got, row)
	}
	if warn := text(t, ctx, "#db .warn"); warn != "" {
		t.Errorf("at B2 the panel also warns %q", warn)
	}
	click(t, ctx, "#undo")
	if warn := text(t, ctx, "#db .warn"); !strings.Contains(warn, "500 of account 1's balance has no inbox row yet") {
		t.Errorf("at A2 the panel warns %q, want the credit without its inbox row", warn)
	}
	do(t, ctx, chromedp.KeyEvent("b"), chromedp.KeyEvent("a"))
	if got, inbox := text(t, ctx, "#broke"), text(t, ctx, "#inbox"); !strings.Contains(got, "credited twice at B2") || inbox != "provider-a/evt-3 → account 1, 500" {
		t.Errorf("at A3: %q, inbox %q; want where it broke, and the inbox row", got, inbox)
	}
	if *screenshots != "" {
		click(t, ctx, "#undo")
		shot(t, ctx, "workshop-stepper-b2.png")
	}

	stepTo(t, ctx, srv, "correct", "A")
	if lock := text(t, ctx, "#lock"); lock != "Write lock held by A" {
		t.Errorf("correct after A1 (BEGIN IMMEDIATE): %q, want the lock held by A", lock)
	}
	click(t, ctx, "#step-B")
	if lock := text(t, ctx, "#lock"); lock != "Write lock held by A; B waiting for it" {
		t.Errorf("correct after A1 B1: %q, want A holding the lock and B waiting for it", lock)
	}
	click(t, ctx, "#step-A")
	if b, pending := balance(t, ctx), text(t, ctx, "#pending"); b.Text != "0" || pending != "A2 INSERT inbox (1 row)" {
		t.Errorf("correct after A1 B1 A2: balance %+v, not committed %q; want 0 and A2's INSERT", b, pending)
	}
	do(t, ctx, chromedp.KeyEvent("a"), chromedp.KeyEvent("a"))
	if b, lock := balance(t, ctx), text(t, ctx, "#lock"); b.Text != "0 → 500 A4" || lock != "Write lock held by B" {
		t.Errorf("correct after A1 B1 A2 A3 A4 (COMMIT): balance %+v, %q; want 0 → 500 at A4 and B holding the lock", b, lock)
	}
}

// TestBrowserMatrixFits holds the SQLite matrix to a projector: the page,
// header and every row, fits 1280×720 without scrolling either way; the
// header sticks to the top where a page does scroll (here in a window
// half as tall); limit columns are hatched and labelled by design, not
// drawn as failures; a neutral cell has a style of its own; the controls
// are styled.
func TestBrowserMatrixFits(t *testing.T) {
	path := chromium(t)
	srv, data, _ := site(t) // before the browser: its time limit starts with it
	// The whole SQLite matrix, as its golden file records it, whatever
	// cells this run served.
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join(root, backends[0].golden))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := report.ParseReport(string(golden))
	if err != nil {
		t.Fatal(err)
	}
	h, err := workshop.Handler(&workshop.Data{Tabs: workshop.Finished(whole), Stepper: data.Stepper})
	if err != nil {
		t.Fatal(err)
	}
	full := httptest.NewServer(h)
	defer full.Close()
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(full.URL+"/?b=sqlite"), chromedp.WaitVisible(chromedp.CSS("#matrix")))
	type box struct{ ScrollW, ScrollH, ClientW, ClientH, Bottom, Right int }
	b := eval[box](t, ctx, `(() => { const d = document.documentElement, r = document.querySelector("#matrix").getBoundingClientRect();
		return {ScrollW: d.scrollWidth, ScrollH: d.scrollHeight, ClientW: d.clientWidth, ClientH: d.clientHeight, Bottom: Math.ceil(r.bottom), Right: Math.ceil(r.right)}; })()`)
	if b.ClientW != viewW || b.ClientH != viewH {
		t.Fatalf("the viewport is %d×%d, want %d×%d", b.ClientW, b.ClientH, viewW, viewH)
	}
	if b.ScrollW > b.ClientW || b.ScrollH > b.ClientH || b.Bottom > viewH || b.Right > viewW {
		t.Errorf("the SQLite matrix at %d×%d: page %d×%d, table ends at x=%d, y=%d; want it all on one screen",
			viewW, viewH, b.ScrollW, b.ScrollH, b.Right, b.Bottom)
	}
	if rows, cells := eval[int](t, ctx, `document.querySelectorAll("#matrix tbody tr").length`), eval[int](t, ctx, `document.querySelectorAll("#matrix td a").length`); rows != len(whole.Variants) || cells < 400 {
		t.Errorf("the matrix shows %d rows and %d cells, want the whole SQLite matrix's %d rows", rows, cells, len(whole.Variants))
	}

	// Limit columns: hatched, labelled, their ✗ not a failure's red.
	type look struct{ Background, Color, Header string }
	style := func(css string) look {
		return eval[look](t, ctx, `(() => { const td = document.querySelector(`+"`"+css+"`"+`); if (!td) return {};
			const th = document.querySelectorAll("#matrix thead th")[td.cellIndex];
			return {Background: getComputedStyle(td).backgroundImage, Color: getComputedStyle(td.querySelector("a")).color, Header: th.textContent}; })()`)
	}
	limit, fail := style(`#matrix td.limit.fail`), style(`#matrix td.fail:not(.limit)`)
	if !strings.Contains(limit.Background, "repeating-linear-gradient") || !strings.Contains(limit.Header, "by design") ||
		limit.Color == fail.Color || strings.Contains(fail.Background, "gradient") {
		t.Errorf("a limit column's ✗ looks like %+v, a failure like %+v; want the limit hatched, under a header saying by design, in another colour", limit, fail)
	}
	if n := eval[int](t, ctx, `[...document.querySelectorAll("#matrix td a")].filter(a => a.dataset.v === "correct" && a.textContent === "✗" && !a.parentElement.classList.contains("limit")).length`); n != 0 {
		t.Errorf("correct has %d ✗ outside the limit columns", n)
	}
	// The neutral mark has its own style: grey and dashed, like a neutral cell.
	neutral := eval[[]string](t, ctx, `(() => { const s = getComputedStyle(document.querySelector(".legend .neutral"));
		return [s.outlineStyle, s.backgroundColor, getComputedStyle(document.querySelector(".legend .fail")).backgroundColor]; })()`)
	if neutral[0] != "dashed" || neutral[1] == neutral[2] {
		t.Errorf("the neutral mark's outline and background are %q, a failure's background %q; want a style of its own", neutral[:2], neutral[2])
	}

	// Where the page scrolls, the header stays at the top.
	do(t, ctx, chromedp.EmulateViewport(viewW, 400))
	top := eval[float64](t, ctx, `(() => { window.scrollTo(0, 300); return document.querySelector("#matrix thead th.sc").getBoundingClientRect().top; })()`)
	do(t, ctx, chromedp.EmulateViewport(viewW, viewH))
	if top < -1 || top > 1 {
		t.Errorf("scrolled 300 px down a 400 px window, the matrix's header is at y=%.0f, want 0 (sticky)", top)
	}

	// Controls are styled, not the browser's defaults.
	do(t, ctx, chromedp.Navigate(srv.URL+"/step?v=naive/checkthenact&s=Race"), chromedp.WaitVisible(chromedp.CSS(`#stepper[data-ready="1"]`)))
	for _, css := range []string{"#undo", "#level", "#step-A"} {
		if r := eval[string](t, ctx, `getComputedStyle(document.querySelector("`+css+`")).borderRadius`); r == "0px" || r == "" {
			t.Errorf("%s has border-radius %q: an unstyled control", css, r)
		}
	}
}

// missingGlyphs is a script that lists the characters of the page's text
// that no installed font has: each is drawn on a canvas in its element's
// font and compared with a code point no font has (U+F0000, private use),
// whose drawing is the fallback box.
const missingGlyphs = `(() => {
  const canvas = document.createElement("canvas"); canvas.width = 64; canvas.height = 64;
  const g = canvas.getContext("2d", {willReadFrequently: true});
  const draw = (font, ch) => { g.clearRect(0, 0, 64, 64); g.font = font; g.textBaseline = "top"; g.fillText(ch, 4, 4);
    return g.measureText(ch).width + ":" + Array.from(g.getImageData(0, 0, 64, 64).data).join(","); };
  const missing = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    const cs = getComputedStyle(n.parentElement);
    if (cs.display === "none" || !n.parentElement.getClientRects().length) continue;
    const font = cs.fontStyle + " " + cs.fontWeight + " 32px " + cs.fontFamily;
    const box = draw(font, String.fromCodePoint(0xF0000));
    for (const ch of new Set(n.nodeValue)) {
      if (ch.codePointAt(0) > 127 && draw(font, ch) === box) missing.add(ch + " (U+" + ch.codePointAt(0).toString(16).toUpperCase() + ") in " + cs.fontFamily);
    }
  }
  return [...missing];
})()`

// TestBrowserNoMissingGlyphs renders every page — the matrix, a cell with
// a wait, the stepper with a session waiting, the claims, a diff — and
// fails for any character drawn as the fallback box. The check is first
// shown to catch one: a character no font has, put on the page.
func TestBrowserNoMissingGlyphs(t *testing.T) {
	path := chromium(t)
	srv, _, _ := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#matrix")))
	control := eval[[]string](t, ctx, `(() => { const s = document.createElement("span"); s.textContent = "⏳ "+String.fromCodePoint(0xF0001);
		document.querySelector("h1").append(s); const m = `+missingGlyphs+`; s.remove(); return m; })()`)
	if len(control) != 2 {
		t.Fatalf("the glyph check finds %q in ⏳ and U+F0001, want both: it cannot tell a missing glyph", control)
	}
	for _, page := range []struct{ url, ready string }{
		{"/", "#matrix"},
		{"/cell?v=correct&s=Race", "table.lanes"},
		{"/cell?v=naive/checkthenact&s=Race", "table.lanes"},
		{"/claims", ".claim"},
		{"/diff?v=naive/checkthenact", "#lesson"},
		{"/step?v=correct&s=Race", `#stepper[data-ready="1"]`},
	} {
		do(t, ctx, chromedp.Navigate(srv.URL+page.url), chromedp.WaitVisible(chromedp.CSS(page.ready)))
		if strings.HasPrefix(page.url, "/step") {
			click(t, ctx, "#step-A")
			click(t, ctx, "#step-B") // B waits: the hourglass is on the page
			if n := eval[int](t, ctx, `document.querySelectorAll(".waitmark svg, .session svg, #lock svg").length`); n < 2 {
				t.Errorf("%s after A1 B1: %d hourglasses drawn, want the waiting session's", page.url, n)
			}
		}
		if missing := eval[[]string](t, ctx, missingGlyphs); len(missing) > 0 {
			t.Errorf("%s draws %d characters as a box, no installed font has them: %s", page.url, len(missing), strings.Join(missing, "; "))
		}
	}
}

// TestBrowserClaims renders CLAIMS.md as Markdown: no backtick is left in
// the text on the page, names in backticks are code, and the cells are
// linked.
func TestBrowserClaims(t *testing.T) {
	path := chromium(t)
	srv, _, _ := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/claims"), chromedp.WaitVisible(chromedp.CSS(".claim")))
	if n := eval[int](t, ctx, "(document.body.innerText.match(/`/g) || []).length"); n != 0 {
		t.Errorf("the claims page shows %d backticks", n)
	}
	codes := eval[int](t, ctx, `document.querySelectorAll(".claim code").length`)
	claims := eval[int](t, ctx, `document.querySelectorAll(".claim").length`)
	links := eval[int](t, ctx, `document.querySelectorAll(".claim .cells a").length`)
	if claims < 26 || codes < claims || links == 0 {
		t.Errorf("the claims page has %d claims, %d code spans, %d cell links; want C1–C26 at least, their names as code, and links", claims, codes, links)
	}
	noOverflow(t, ctx, "the claims")
	shot(t, ctx, "workshop-claims.png")
}

// TestBrowserDiffOpensAtTheMistake: the diff of naive/checkthenact opens at
// its first hunk of code, scrolled past the package clause, and says so.
func TestBrowserDiffOpensAtTheMistake(t *testing.T) {
	path := chromium(t)
	srv, _, _ := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/diff?v=naive/checkthenact"), chromedp.WaitVisible(chromedp.CSS("#lesson")))
	type at struct {
		ScrollY, Top float64
		Lesson       string
		Noise        int
	}
	got := eval[at](t, ctx, `({ScrollY: window.scrollY, Top: document.getElementById("lesson").getBoundingClientRect().top,
		Lesson: document.getElementById("lesson").textContent, Noise: document.querySelectorAll("tr.hunk.noise").length})`)
	if got.ScrollY <= 0 || got.Top < 0 || got.Top > 40 || !strings.Contains(got.Lesson, "The mistake: @@") ||
		!strings.Contains(got.Lesson, "func (h *Handler) Process") || got.Noise == 0 {
		t.Errorf("the diff opens at %+v; want it scrolled to the hunk in Process, the package clause's hunk above it marked", got)
	}
}

// TestBrowserTour opens the Tour tab from the navigation and reads it
// back: a step for each of workshop.Tour's, in order, each with its
// command and its Click link; every answer hidden (its <details> closed,
// its text not drawn) until its summary is clicked, and then shown, the
// other answers still hidden; the step's link leads to the page it names.
func TestBrowserTour(t *testing.T) {
	path := chromium(t)
	srv, _, _ := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#matrix")),
		chromedp.Click(chromedp.CSS(`nav a[href="/tour"]`)), chromedp.WaitVisible(chromedp.CSS("#tour")))
	type step struct {
		Title, Run, Click string
		Open, Shown       bool
	}
	read := func() []step {
		return eval[[]step](t, ctx, `[...document.querySelectorAll("#tour li.step")].map(li => {
			const d = li.querySelector("details.answer");
			return {Title: li.querySelector("h2").textContent, Run: li.querySelector("code.run").textContent,
				Click: li.querySelector("a.click").getAttribute("href"), Open: d.open,
				Shown: d.querySelector("p").checkVisibility()};
		})`)
	}
	steps := read()
	if len(steps) != len(workshop.Tour) {
		t.Fatalf("the Tour tab lists %d steps, want workshop.Tour's %d", len(steps), len(workshop.Tour))
	}
	for i, s := range workshop.Tour {
		got := steps[i]
		if got.Title != fmt.Sprintf("%d. %s", i+1, s.Title) || got.Run != s.Command() || got.Click != s.Click {
			t.Errorf("step %d shows %+v, want %q, %q and a link to %q", i+1, got, s.Title, s.Command(), s.Click)
		}
		if got.Open || got.Shown {
			t.Errorf("step %d (%s): its answer is shown before it is asked for", i+1, s.Title)
		}
	}
	click(t, ctx, `#step-3 details.answer summary`)
	for i, got := range read() {
		if want := i == 2; got.Open != want || got.Shown != want {
			t.Errorf("after revealing step 3's answer, step %d's is open %v, shown %v; want %v", i+1, got.Open, got.Shown, want)
		}
	}
	if answer := text(t, ctx, "#step-3 details.answer p"); answer != workshop.Tour[2].Answer {
		t.Errorf("step 3's answer reads %q, want %q", answer, workshop.Tour[2].Answer)
	}
	noOverflow(t, ctx, "the tour")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#step-3 a.click`)), chromedp.WaitVisible(chromedp.CSS(`#stepper[data-ready="1"]`)))
	if url := eval[string](t, ctx, `location.pathname + location.search`); url != workshop.Tour[2].Click {
		t.Errorf("step 3's link led to %s, want %s", url, workshop.Tour[2].Click)
	}
}

// TestBrowserStepperOnItsWay opens the stepper before its trees have come,
// as a room does that clicks at once: the page says how far the export is
// in the page's own layout, then opens the stepper by itself once the
// trees come, with no reload by hand.
func TestBrowserStepperOnItsWay(t *testing.T) {
	path := chromium(t)
	_, data, _ := site(t) // before the browser: its time limit starts with it
	waiting := &workshop.Data{Tabs: data.Tabs, Claims: data.Claims}
	waiting.StepperProgress("exporting every schedule of the two races, a tree per variant: 3 of 32 trees")
	h, err := workshop.Handler(waiting)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/step?v=naive/checkthenact&s=Race"), chromedp.WaitVisible(chromedp.CSS("#stepper-state")))
	if got := text(t, ctx, "#stepper-state"); !strings.Contains(got, "Getting the stepper ready: exporting every schedule") || !strings.Contains(got, "3 of 32 trees") {
		t.Errorf("the stepper before its trees says %q, want how far their export is", got)
	}
	if nav := eval[int](t, ctx, `document.querySelectorAll("nav a").length`); nav != 5 {
		t.Errorf("the waiting page has %d navigation links, want the page's five", nav)
	}
	noOverflow(t, ctx, "the stepper on its way")
	shot(t, ctx, "workshop-stepper-waiting.png")
	waiting.SetStepper(data.Stepper)
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#stepper[data-ready="1"]`)))
	click(t, ctx, "#step-A")
	if got := text(t, ctx, "#schedule"); got != "schedule: A1" {
		t.Errorf("after the page opened the stepper by itself and A was clicked: %q, want schedule: A1", got)
	}
}

// chartPoint is a point of the cost chart as the browser laid it out.
type chartPoint struct {
	Series, Panel    string
	Deliverers       int
	Median, Min, Max float64
	CY, Top, Bottom  float64 // the point's centre; its panel's top and bottom, on screen
	Width            float64 // drawn width: 0 when not shown
	Title            string
}

// TestBrowserCost draws the recorded run docs/bench.json on /cost and
// finds every measured figure on the chart: a point per durability and
// deliverer count in each panel (correct's events/s, and its ratio to the
// bare work), carrying the run's median, min and max, drawn inside its
// panel, a higher median above a lower one, and a table row for each.
func TestBrowserCost(t *testing.T) {
	path := chromium(t)
	srv, data, _ := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/cost"), chromedp.WaitVisible(chromedp.CSS("#chart svg")))
	points := eval[[]chartPoint](t, ctx, `[...document.querySelectorAll("#chart circle.point")].map(c => {
		const r = c.getBoundingClientRect(), p = c.closest("g.panel").querySelector("rect").getBoundingClientRect();
		return {Series: c.dataset.series, Panel: c.dataset.panel, Deliverers: +c.dataset.deliverers,
			Median: +c.dataset.median, Min: +c.dataset.min, Max: +c.dataset.max,
			CY: r.top + r.height / 2, Top: p.top, Bottom: p.bottom, Width: r.width,
			Title: c.querySelector("title").textContent};
	})`)
	type key struct {
		series, panel string
		deliverers    int
	}
	found := map[key]chartPoint{}
	for _, p := range points {
		found[key{p.Series, p.Panel, p.Deliverers}] = p
	}
	want := 0
	for _, row := range data.Bench.Rows {
		for panel, s := range map[string]report.Spread{"rate": row.Rates["distinct"], "ratio": row.Ratios["distinct"]} {
			want++
			p, ok := found[key{row.Durability, panel, row.Deliverers}]
			switch {
			case !ok:
				t.Errorf("the %s panel has no point for %s with %d deliverers, want median %g", panel, row.Durability, row.Deliverers, s.Median)
			case !near(p.Median, s.Median) || !near(p.Min, s.Min) || !near(p.Max, s.Max):
				t.Errorf("point %s/%s/%d = %g (%g–%g), want %g (%g–%g) as measured", panel, row.Durability, row.Deliverers,
					p.Median, p.Min, p.Max, s.Median, s.Min, s.Max)
			case p.Width == 0 || p.CY < p.Top-1 || p.CY > p.Bottom+1:
				t.Errorf("point %s/%s/%d drawn at y %.0f, %.0f px wide, want it inside its panel (y %.0f–%.0f)", panel,
					row.Durability, row.Deliverers, p.CY, p.Width, p.Top, p.Bottom)
			case !strings.Contains(p.Title, row.Durability):
				t.Errorf("point %s/%s/%d's title = %q, want it to name %s", panel, row.Durability, row.Deliverers, p.Title, row.Durability)
			}
		}
	}
	if len(points) != want {
		t.Errorf("the chart has %d points, want %d: two per row of %s", len(points), want, recordedBench)
	}
	// A higher median is drawn higher: screen y falls as the value grows
	// (ratios above the axis's end are drawn at its end).
	for _, a := range points {
		for _, b := range points {
			if a.Panel == b.Panel && a.Median < b.Median && a.CY < b.CY-0.5 && !(a.Panel == "ratio" && a.Median >= 2) {
				t.Errorf("%s panel: %s/%d (%g) is drawn above %s/%d (%g)", a.Panel, a.Series, a.Deliverers, a.Median, b.Series, b.Deliverers, b.Median)
			}
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#figures tbody tr").length`); n != len(data.Bench.Rows) {
		t.Errorf("the figures table has %d rows, want %d", n, len(data.Bench.Rows))
	}
	noOverflow(t, ctx, "the cost page")
	shot(t, ctx, "workshop-cost.png")
}

// near reports whether a and b agree to the six significant digits the
// chart writes.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-5*math.Max(math.Abs(a), math.Abs(b))
}
