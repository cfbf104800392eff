package workshop

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"idemlab/lab/report"
)

// The backends as tabs. The same variants hold on one database and break
// on another, so the page shows one matrix per backend — SQLite, and
// PostgreSQL and MariaDB at each isolation level — as tabs over the
// matrix. A tab is
// live, filled in by a go test run as its cells finish, or recorded: the
// verdicts of a golden file, when there is no server to run them on. A
// recorded tab says so on every page it shows and names the command that
// runs it live; a live tab shows no verdict before its cell has finished.

// Tab is one backend's matrix on the page.
type Tab struct {
	// Slug names the tab in URLs (?b=pg-rc) and on cmd/lab's -backend.
	Slug string
	// Report holds the cells so far: on a live tab, those that have
	// finished; on a recorded one, the golden file's verdicts, with
	// Report.Recorded naming the file.
	Report *report.Report
	// Done is set once a live run has ended: its report is the one the
	// tests wrote, whole.
	Done bool
	// Total is how many cells the live run will fill in, as far as known.
	Total int
	// Rerun is the command that runs this tab live (shown on a recorded
	// tab), or that reproduces its run.
	Rerun string
	// Problem, if set, says what went wrong with the live run (it could
	// not start, or its tests failed), for the page to say.
	Problem string
}

// Label is the tab's name on the page: the backend, with PostgreSQL
// shortened to PG and the isolation levels to RC, RR, RR+SI (REPEATABLE
// READ with innodb_snapshot_isolation) and SER, so that eight tabs fit one
// line at 1280×720; the tab's title and the page's heading say it whole.
func (t *Tab) Label() string {
	return labelShort.Replace(t.Report.BackendName())
}

// labelShort shortens a backend's name for its tab.
var labelShort = strings.NewReplacer("PostgreSQL ", "PG ", "READ COMMITTED", "RC", "REPEATABLE READ", "RR",
	", innodb_snapshot_isolation", "+SI", "SERIALIZABLE", "SER")

// Server is the database server whose tests keep the tab's golden file:
// "PostgreSQL", "MariaDB"; "SQLite" on SQLite's tab.
func (t *Tab) Server() string {
	name, _, _ := strings.Cut(t.Report.BackendName(), " ")
	return name
}

// Recorded reports whether the tab shows a golden file's verdicts, not a
// run.
func (t *Tab) Recorded() bool { return t.Report.Recorded != "" }

// Finished counts the cells with a verdict.
func (t *Tab) Finished() int {
	n := 0
	for _, v := range t.Report.Variants {
		n += len(v.Results)
	}
	return n
}

// Running reports whether the tab's live run is still under way.
func (t *Tab) Running() bool { return !t.Recorded() && !t.Done && t.Problem == "" }

// Tabs holds the tabs and guards them: cmd/lab updates them while the
// page is served.
type Tabs struct {
	mu      sync.RWMutex
	tabs    []*Tab
	version int // bumped on every update, for the page's script
}

// NewTabs returns the tabs, in the order the page shows them; the first is
// the default.
func NewTabs(tabs ...*Tab) *Tabs { return &Tabs{tabs: tabs} }

// Update runs f on the tab named slug under the lock, and tells the page
// that something changed.
func (ts *Tabs) Update(slug string, f func(t *Tab)) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.tabs {
		if t.Slug == slug {
			f(t)
		}
	}
	ts.version++
}

// view runs f with the tabs under the read lock.
func (ts *Tabs) view(f func(tabs []*Tab, version int)) {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	f(ts.tabs, ts.version)
}

// tab returns the tab slug names, or the first for "".
func tab(tabs []*Tab, slug string) *Tab {
	for _, t := range tabs {
		if t.Slug == slug || slug == "" {
			return t
		}
	}
	return nil
}

// status is what the matrix page's script polls: whether to fetch the page
// again.
type status struct {
	Version  int  `json:"version"`
	Running  bool `json:"running"`
	Finished int  `json:"finished"`
	Total    int  `json:"total"`
}

func (s *server) status(w http.ResponseWriter, r *http.Request) {
	s.onTab(w, r, func(_ []*Tab, t *Tab, version int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(status{Version: version, Running: t.Running(), Finished: t.Finished(), Total: t.Total})
	})
}

// Finished is the tabs of one finished run on SQLite: rep's cells, for a
// page that serves a report it already has.
func Finished(rep *report.Report) *Tabs {
	return NewTabs(&Tab{Slug: "sqlite", Report: rep, Done: true})
}
