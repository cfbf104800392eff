package workshop

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"idemlab/lab/report"
)

// tabbed is testData with a live SQLite tab that has not finished a cell,
// a recorded PostgreSQL tab and a recorded MariaDB tab.
func tabbed(t *testing.T) (*Data, *report.Report) {
	d := testData(t)
	full := reportOf(d)
	live := report.New(full.Scenarios, []report.VariantResults{{Name: "correct"}, {Name: "naive/checkthenact", Mistake: "check, then act"}})
	live.Backend = report.SQLite
	rec := report.New(full.Scenarios, []report.VariantResults{{Name: "correct"}, {Name: "naive/forupdate", Mistake: "FOR UPDATE on no row"}})
	rec.Backend, rec.Recorded = report.PostgresBackend("read committed"), "scenarios/testdata/postgres-rc.golden"
	rec.Set("correct", "Race", &report.Cell{Pass: true})
	rec.Set("naive/forupdate", "Race", &report.Cell{Pass: false})
	maria := report.New(full.Scenarios, []report.VariantResults{{Name: "correct"}, {Name: "naive/foundrows", Mistake: "clientFoundRows=true"}})
	maria.Backend = report.MariaDBBackend("repeatable read") + ", innodb_snapshot_isolation"
	maria.Recorded = "scenarios/testdata/mariadb-rr-si.golden"
	maria.Set("correct", "Race", &report.Cell{Pass: true})
	maria.Set("naive/foundrows", "Race", &report.Cell{Pass: false})
	d.Tabs = NewTabs(&Tab{Slug: "sqlite", Report: live, Total: 2, Rerun: "go run ./cmd/lab"},
		&Tab{Slug: "pg-rc", Report: rec, Rerun: "IDEMLAB_PG='postgres:///postgres?host=/var/run/postgresql' go run ./cmd/lab web"},
		&Tab{Slug: "mariadb-rr-si", Report: maria, Rerun: `eval "$(.ci/mariadb-start)"; go run ./cmd/lab web`})
	return d, full
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// matrixMarks are the verdicts the matrix table shows.
func matrixMarks(page string) string {
	_, table, _ := strings.Cut(page, `<table class="matrix"`)
	return strings.Join(regexp.MustCompile(`[✓✗]`).FindAllString(table, -1), "")
}

// TestLiveTabShowsOnlyFinishedCells: a live tab shows no verdict before its
// cell has finished — not the golden file's, not a guess — and each one
// as soon as it has.
func TestLiveTabShowsOnlyFinishedCells(t *testing.T) {
	d, full := tabbed(t)
	h, err := Handler(d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	// Before go test has said how many cells: it is starting, not stuck.
	d.Tabs.Update("sqlite", func(t *Tab) { t.Total = 0 })
	if _, page := get(t, srv, "/"); !strings.Contains(page, "Starting:</b> go test is compiling") || strings.Contains(page, "Running live") {
		t.Errorf("GET / before go test has said how many cells:\n%s\nwant it said to be starting", page)
	}
	d.Tabs.Update("sqlite", func(t *Tab) { t.Total = 2 })
	code, page := get(t, srv, "/")
	if code != 200 || matrixMarks(page) != "" || !strings.Contains(page, "Running live:</b> 0 of 2 cells finished") || strings.Count(page, `class="pending"`) != 2 {
		t.Errorf("GET / before any cell = %d, marks %q; want 200, no mark, 0 of 2 finished and 2 pending cells:\n%s", code, matrixMarks(page), page)
	}
	if code, _ := get(t, srv, "/cell?b=sqlite&v=correct&s=Race"); code != http.StatusNotFound {
		t.Errorf("GET a cell not finished = %d, want 404", code)
	}
	var st status
	_, body := get(t, srv, "/status?b=sqlite")
	if err := json.Unmarshal([]byte(body), &st); err != nil || !st.Running || st.Finished != 0 {
		t.Errorf("GET /status before any cell = %s, want running, 0 finished", body)
	}
	before := st.Version
	d.Tabs.Update("sqlite", func(t *Tab) {
		t.Report.Add(&report.Finished{Backend: report.SQLite, Scenario: full.Scenarios[0], Variant: "naive/checkthenact",
			Cell: full.Cell("naive/checkthenact", "Race")})
	})
	_, page = get(t, srv, "/")
	if got := matrixMarks(page); got != "✗" || !strings.Contains(page, "1 of 2 cells finished") {
		t.Errorf("GET / after one cell: marks %q, want ✗ alone and 1 of 2 finished", got)
	}
	_, body = get(t, srv, "/status?b=sqlite")
	json.Unmarshal([]byte(body), &st)
	if st.Version == before || st.Finished != 1 {
		t.Errorf("GET /status after one cell = %s, want a new version and 1 finished", body)
	}
	d.Tabs.Update("sqlite", func(t *Tab) { t.Report, t.Done = full, true })
	_, page = get(t, srv, "/")
	if got := matrixMarks(page); got != "✓✗" || strings.Contains(page, "Running live") || strings.Contains(page, `class="pending"`) {
		t.Errorf("GET / after the run: marks %q, want ✓✗ and no sign of a run under way", got)
	}
}

// TestRecordedTab: a PostgreSQL tab without a server shows the golden
// file's verdicts, says they are recorded and how to run them live, and
// offers no evidence it does not have.
func TestRecordedTab(t *testing.T) {
	d, _ := tabbed(t)
	h, err := Handler(d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, page := get(t, srv, "/?b=pg-rc")
	for _, want := range []string{"Recorded, not run now", "scenarios/testdata/postgres-rc.golden",
		"IDEMLAB_PG=&#39;postgres:///postgres?host=/var/run/postgresql&#39; go run ./cmd/lab web",
		`aria-current="page" title="PostgreSQL READ COMMITTED">PG RC`, "which the PostgreSQL tests check"} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /?b=pg-rc = %d, lacks %q", code, want)
		}
	}
	if got := matrixMarks(page); got != "✓✗" || strings.Contains(page, "Running live") {
		t.Errorf("GET /?b=pg-rc marks = %q, want the recorded ✓✗, not called live", got)
	}
	_, cell := get(t, srv, "/cell?b=pg-rc&v=naive/forupdate&s=Race")
	if !strings.Contains(cell, "Recorded, not run now") || strings.Contains(cell, "<h2>Transcript</h2>") || strings.Contains(cell, "Play this race") {
		t.Errorf("GET a recorded cell = %s\nwant it called recorded, with no transcript and no stepper", cell)
	}
	_, tabs := get(t, srv, "/")
	if !strings.Contains(tabs, `href="/?b=pg-rc"`) || !strings.Contains(tabs, `href="/?b=sqlite"`) {
		t.Errorf("GET / has no link to each tab")
	}
	if code, body := get(t, srv, "/?b=mysql"); code != http.StatusNotFound || !strings.Contains(body, "sqlite, pg-rc, mariadb-rr-si") {
		t.Errorf("GET /?b=mysql = %d %q, want 404 naming the backends", code, body)
	}
	if code, _ := get(t, srv, "/diff?v=naive/forupdate"); code != http.StatusNotFound {
		t.Errorf("GET the diff of a PostgreSQL-only row = %d, want 404 (this fixture has no diff for it), not an unknown variant", code)
	}
}

// TestRecordedMariaDBTab: a MariaDB tab without a server is recorded as a
// PostgreSQL one is: the golden file's verdicts, the file named, the
// MariaDB tests named as what checks it, the command that runs it live,
// and a short label whose title is the whole backend; its cells link
// within the tab.
func TestRecordedMariaDBTab(t *testing.T) {
	d, _ := tabbed(t)
	h, err := Handler(d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, page := get(t, srv, "/?b=mariadb-rr-si")
	for _, want := range []string{"Recorded, not run now", "scenarios/testdata/mariadb-rr-si.golden",
		"which the MariaDB tests check", "eval &#34;$(.ci/mariadb-start)&#34;; go run ./cmd/lab web",
		`aria-current="page" title="MariaDB REPEATABLE READ, innodb_snapshot_isolation">MariaDB RR&#43;SI <small>recorded</small>`,
		`href="/cell?b=mariadb-rr-si&amp;v=naive%2ffoundrows&amp;s=Race"`} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /?b=mariadb-rr-si = %d, lacks %q", code, want)
		}
	}
	_, banner, _ := strings.Cut(page, `id="state"`)
	banner, _, _ = strings.Cut(banner, "</p>")
	if got := matrixMarks(page); got != "✓✗" || strings.Contains(banner, "PostgreSQL") {
		t.Errorf("GET /?b=mariadb-rr-si marks = %q, banner %q; want the recorded ✓✗, and no word of PostgreSQL", got, banner)
	}
	if _, cell := get(t, srv, "/cell?b=mariadb-rr-si&v=foundrows&s=Race"); !strings.Contains(cell, "Recorded, not run now") ||
		!strings.Contains(cell, "on MariaDB REPEATABLE READ, innodb_snapshot_isolation") {
		t.Errorf("GET a recorded MariaDB cell = %s\nwant it called recorded, on its backend", cell)
	}
}

// TestTabLabels: every backend's tab label is short enough for eight tabs
// on one line, and says its server and level.
func TestTabLabels(t *testing.T) {
	for backend, want := range map[string]string{
		report.SQLite:                                                            "SQLite",
		report.PostgresBackend("read committed"):                                 "PG RC",
		report.PostgresBackend("repeatable read"):                                "PG RR",
		report.PostgresBackend("serializable"):                                   "PG SER",
		report.MariaDBBackend("read committed"):                                  "MariaDB RC",
		report.MariaDBBackend("repeatable read"):                                 "MariaDB RR",
		report.MariaDBBackend("repeatable read") + ", innodb_snapshot_isolation": "MariaDB RR+SI",
		report.MariaDBBackend("serializable"):                                    "MariaDB SER",
	} {
		tab := &Tab{Report: &report.Report{Backend: backend}}
		if got := tab.Label(); got != want {
			t.Errorf("the tab of %s is labelled %q, want %q", backend, got, want)
		}
	}
}
