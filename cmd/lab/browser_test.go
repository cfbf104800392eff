package main

import (
	"context"
	"flag"
	"fmt"
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
// -web.screenshots=DIR (relative to the module root) saves the matrix and a
// stepped race at 1280×720; the README's pictures are regenerated with
//
//	IDEMLAB_BROWSER=1 go test ./cmd/lab -run 'TestBrowser(Matrix|Stepper|Backends)$' -count=1 -web.full -web.screenshots=docs

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
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

var (
	siteOnce sync.Once
	siteData *workshop.Data
	siteErr  error
)

// site serves the workshop from one go test run of the scenarios: the
// cells of Race for correct and naive/checkthenact (or the whole matrix with
// -web.full) and their stepper trees.
func site(t *testing.T) (*httptest.Server, *workshop.Data) {
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
		siteData, siteErr = webData(root, reps[0], stepperPath)
		if siteErr != nil {
			return
		}
		// The tabs as go run ./cmd/lab web shows them without a server:
		// SQLite's run, PostgreSQL's levels recorded.
		siteData.Tabs, siteErr = webTabs(root, false)
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
	return srv, siteData
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
	srv, data := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#matrix")))
	cells := eval[int](t, ctx, `document.querySelectorAll("#matrix td a").length`)
	loadMs := eval[float64](t, ctx, `performance.getEntriesByType("navigation")[0].loadEventEnd`)
	want := 0
	for _, v := range data.Report.Variants {
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
	srv, data := site(t) // before the browser: its time limit starts with it
	ctx := browser(t, path)
	do(t, ctx, chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(chromedp.CSS(`#matrix a[data-v="naive/checkthenact"][data-s="Race"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.lanes")))
	lines := eval[[]string](t, ctx, `[...document.querySelectorAll("table.lanes tbody tr")].map(r => r.dataset.line)`)
	explain, err := renderExplain(data.Report, "naive/checkthenact", "Race")
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
	srv, _ := site(t) // before the browser: its time limit starts with it
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
	srv, data := site(t) // before the browser: its time limit starts with it
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

// TestBrowserBackends switches from the SQLite tab to each PostgreSQL tab
// from the keyboard, as the page stands without a server (recorded
// verdicts), and checks every cell shown against the golden file, the
// label that says it is a record, and the width at 1280×720.
func TestBrowserBackends(t *testing.T) {
	path := chromium(t)
	srv, _ := site(t) // before the browser: its time limit starts with it
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
		if got := text(t, ctx, "#state"); !strings.Contains(got, "Recorded, not run now") || !strings.Contains(got, b.golden) {
			t.Errorf("%s tab: the banner says %q, want it called recorded, from %s", b.name, got, b.golden)
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
			if wc == nil || c[2] != mark(wc) {
				t.Errorf("%s tab: %s × %s shows %q, want %s's verdict %v", b.name, c[0], c[1], c[2], b.golden, wc)
			}
		}
		noOverflow(t, ctx, "the "+b.name+" tab")
	}
	shot(t, ctx, "workshop-postgres.png")
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
	return &workshop.Data{Report: rep, Stepper: st, Diffs: webDiffs(), Claims: string(claims)}, nil
}
