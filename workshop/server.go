// Package workshop serves the kit to a room: the verdict matrix, each
// cell's transcript as swimlanes, a variant's diff against correct/, the
// claims linked to their cells, and a race stepper in which a student plays
// the scheduler. It renders what the scenario tests exported and runs no
// database itself, so it links neither SQLite nor package testing (a
// scheduled run needs a testing/synctest bubble, which needs a
// *testing.T). cmd/lab starts the tests and hands their files over.
package workshop

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"idemlab/lab/report"
)

//go:embed web
var assets embed.FS

// Data is everything the pages show. cmd/lab gathers it — the scenario
// tests' report and stepper file, each variant's diff against correct/ and
// CLAIMS.md — and the server only renders it: nothing a request says is run,
// and no name from a request reaches a file path or a command.
//
// The matrices come as Tabs, which cmd/lab fills in while the page is
// served (Finished makes one finished SQLite tab of a report). The stepper
// and the diffs may come later too (SetStepper, SetDiffs): until then their
// pages say they are on their way — the stepper's how far (StepperProgress),
// or why it will not come (StepperFailed).
type Data struct {
	Tabs    *Tabs
	Stepper *report.Stepper
	Diffs   map[string]string // variant → the diff cmd/lab's diff prints
	Claims  string            // CLAIMS.md
	// Bench is what a run of go run ./cmd/lab bench measured, drawn on
	// /cost (nil: the page says how to make one).
	Bench *report.Bench
	// BenchFile names the file Bench was read from, for the page to say.
	BenchFile string

	mu            sync.RWMutex // guards Stepper, Diffs and the stepper's note once served
	stepperNote   string       // what the stepper's export is doing, or why it failed
	stepperFailed bool
}

// SetStepper makes the stepper's trees available to the page.
func (d *Data) SetStepper(st *report.Stepper) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Stepper = st
}

// StepperProgress says how far the export of the stepper's trees is, for
// the stepper's page to show until SetStepper: "compiling the tests",
// "12 of 32 trees".
func (d *Data) StepperProgress(note string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stepperNote, d.stepperFailed = note, false
}

// StepperFailed says why the stepper's trees will not come: the stepper's
// page shows it instead of waiting for them.
func (d *Data) StepperFailed(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stepperNote, d.stepperFailed = err.Error(), true
}

// stepperState is the stepper's trees, or, while there are none, what the
// page says about them.
func (d *Data) stepperState() (st *report.Stepper, note string, failed bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.Stepper, d.stepperNote, d.stepperFailed
}

// SetDiffs makes the variants' diffs available to the page.
func (d *Data) SetDiffs(diffs map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Diffs = diffs
}

func (d *Data) stepper() *report.Stepper {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.Stepper
}

func (d *Data) diffOf(v string) (string, bool, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	text, ok := d.Diffs[v]
	return text, ok, d.Diffs != nil
}

// Limits on what a request may ask: the pages take one or two short names
// as query parameters, and nothing else.
const (
	maxQuery       = 512
	requestTimeout = 5 * time.Second
)

// stepperReload is how often, in seconds, the stepper's page reloads
// itself while its trees are on their way.
const stepperReload = 2

// Handler serves the pages:
//
//	/?b=               the verdict matrix of a backend (a tab; SQLite by default)
//	/status?b=         how far its run is, for the page's script
//	/cell?b=&v=&s=     a cell: verdict, evidence, transcript as swimlanes
//	/diff?v=           a variant against correct/, side by side
//	/claims            CLAIMS.md, each claim linked to its cells
//	/tour              the guided tour (Tour), each answer behind a reveal
//	/cost              what the inbox costs: lab bench's figures as a chart and a table
//	/step?v=&s=        the race stepper (its tree from /tree?v=&s=)
//	/static/…          the style sheet and the stepper's script
func Handler(d *Data) (http.Handler, error) {
	if d.Tabs == nil {
		return nil, fmt.Errorf("workshop: no matrix to show: Data needs Tabs")
	}
	tmpl, err := template.New("").Funcs(template.FuncMap{
		"mark":      func(c *report.Cell) string { return c.Mark() },
		"verdict":   func(c *report.Cell) string { return markClass(c.Mark()) },
		"markClass": markClass,
		"lanes":     LanesOf,
		"inPlace": func(c *report.Cell) []report.Line {
			lines, _ := c.FailuresInPlace()
			return lines
		},
		"at": func(xs []string, i int) string {
			if i < len(xs) {
				return xs[i]
			}
			return ""
		},
		"isRace": func(s string) bool { st := d.stepper(); return st != nil && st.Tree("correct", s) != nil },
		"inc":    func(i int) int { return i + 1 },
		"spread": spreadText,
		"pct": func(a, b int) int {
			if b == 0 {
				return 0
			}
			return 100 * a / b
		},
	}).ParseFS(assets, "web/*.html")
	if err != nil {
		return nil, err
	}
	s := &server{d: d, tmpl: tmpl}
	static, _ := fs.Sub(assets, "web/static")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.matrix)
	mux.HandleFunc("GET /status", s.status)
	mux.HandleFunc("GET /cell", s.cell)
	mux.HandleFunc("GET /diff", s.diff)
	mux.HandleFunc("GET /claims", s.claims)
	mux.HandleFunc("GET /tour", s.tour)
	mux.HandleFunc("GET /cost", s.cost)
	mux.HandleFunc("GET /step", s.step)
	mux.HandleFunc("GET /tree", s.tree)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	return http.TimeoutHandler(bounded(mux), requestTimeout, "the request took too long\n"), nil
}

// markClass is the style class of a verdict's mark: "pass", "fail", or
// "neutral" for a cell that could not judge the handler.
func markClass(mark string) string {
	return map[string]string{report.Pass: "pass", report.Fail: "fail", report.Neutral: "neutral"}[mark]
}

// bounded refuses what no page asks for: a body, or a long query.
func bounded(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.RawQuery) > maxQuery {
			http.Error(w, fmt.Sprintf("query longer than %d bytes: the pages take a variant and a scenario name", maxQuery), http.StatusRequestURITooLong)
			return
		}
		if r.ContentLength > 0 {
			http.Error(w, "the pages take no request body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

type server struct {
	d    *Data
	tmpl *template.Template
}

func (s *server) render(w http.ResponseWriter, name string, data any) {
	s.renderStatus(w, http.StatusOK, name, data)
}

// renderStatus renders the page name with the status code.
func (s *server) renderStatus(w http.ResponseWriter, code int, name string, data any) {
	// Render into a buffer: a template that fails halfway must not leave
	// half a page behind a 200.
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// param returns a required query parameter, or answers 400.
func param(w http.ResponseWriter, r *http.Request, name, what string) (string, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		http.Error(w, fmt.Sprintf("missing parameter %s (%s), e.g. /cell?v=naive/checkthenact&s=Race", name, what), http.StatusBadRequest)
		return "", false
	}
	return v, true
}

// variant resolves v against rep's rows, or answers 404 naming them.
func (s *server) variant(w http.ResponseWriter, r *http.Request, rep *report.Report) (report.VariantResults, bool) {
	name, ok := param(w, r, "v", "a variant")
	if !ok {
		return report.VariantResults{}, false
	}
	v, err := rep.LookupVariant(name)
	if err != nil {
		http.Error(w, fmt.Sprintf("%v (on %s)", err, rep.BackendName()), http.StatusNotFound)
		return report.VariantResults{}, false
	}
	return v, true
}

func (s *server) scenario(w http.ResponseWriter, r *http.Request, rep *report.Report) (report.ScenarioInfo, bool) {
	name, ok := param(w, r, "s", "a scenario")
	if !ok {
		return report.ScenarioInfo{}, false
	}
	sc, err := rep.LookupScenario(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return report.ScenarioInfo{}, false
	}
	return sc, true
}

// onTab runs f with the tab the request's b names, under the tabs' read
// lock, or answers 404 naming the tabs.
func (s *server) onTab(w http.ResponseWriter, r *http.Request, f func(tabs []*Tab, t *Tab, version int)) {
	slug := r.URL.Query().Get("b")
	s.d.Tabs.view(func(tabs []*Tab, version int) {
		t := tab(tabs, slug)
		if t == nil {
			var slugs []string
			for _, t := range tabs {
				slugs = append(slugs, t.Slug)
			}
			http.Error(w, fmt.Sprintf("unknown backend %q; backends are: %s", slug, strings.Join(slugs, ", ")), http.StatusNotFound)
			return
		}
		f(tabs, t, version)
	})
}

func (s *server) matrix(w http.ResponseWriter, r *http.Request) {
	s.onTab(w, r, func(tabs []*Tab, t *Tab, version int) {
		s.render(w, "matrix.html", map[string]any{"Tabs": tabs, "T": t, "R": t.Report, "Version": version})
	})
}

func (s *server) cell(w http.ResponseWriter, r *http.Request) {
	s.onTab(w, r, func(tabs []*Tab, t *Tab, version int) {
		v, ok := s.variant(w, r, t.Report)
		if !ok {
			return
		}
		sc, ok := s.scenario(w, r, t.Report)
		if !ok {
			return
		}
		c := v.Results[sc.Name]
		if c == nil {
			why := "the report has no such cell"
			if t.Running() {
				why = "it has not finished yet: the matrix fills in as the run goes"
			}
			http.Error(w, fmt.Sprintf("%s × %s on %s: no verdict, %s", v.Name, sc.Name, t.Report.BackendName(), why), http.StatusNotFound)
			return
		}
		s.render(w, "cell.html", map[string]any{"T": t, "V": v, "S": sc, "C": c})
	})
}

func (s *server) diff(w http.ResponseWriter, r *http.Request) {
	name, ok := param(w, r, "v", "a variant")
	if !ok {
		return
	}
	var rows []string
	mistakes := map[string]string{}
	s.d.Tabs.view(func(tabs []*Tab, _ int) {
		for _, t := range tabs {
			for _, row := range t.Report.Variants {
				if _, ok := mistakes[row.Name]; !ok {
					rows, mistakes[row.Name] = append(rows, row.Name), row.Mistake
				}
			}
		}
	})
	found, err := report.LookupVariant(rows, name)
	if err != nil {
		http.Error(w, fmt.Sprintf("%v (in any matrix)", err), http.StatusNotFound)
		return
	}
	v := report.VariantResults{Name: found, Mistake: mistakes[found]}
	text, ok, ready := s.d.diffOf(v.Name)
	switch {
	case !ready:
		http.Error(w, "the diffs are still being made (git diff, a second or two): reload", http.StatusServiceUnavailable)
		return
	case !ok:
		http.Error(w, fmt.Sprintf("no diff for %s: correct is what the others are compared with", v.Name), http.StatusNotFound)
		return
	}
	s.render(w, "diff.html", map[string]any{"V": v, "D": ParseDiff(text)})
}

func (s *server) claims(w http.ResponseWriter, r *http.Request) {
	s.d.Tabs.view(func(tabs []*Tab, _ int) {
		s.render(w, "claims.html", ParseClaims(s.d.Claims, tabs[0].Report))
	})
}

// tour shows the guided tour: every step with its command, a link to the
// same on the page, what to look at, the question, and the answer behind a
// <details> the room opens once it has had its go.
func (s *server) tour(w http.ResponseWriter, r *http.Request) {
	s.render(w, "tour.html", Tour)
}

// cost shows what lab bench measured: the chart (BenchSVG), then the
// figures behind it as a table, the command each run ran, when, and the
// machine's load then.
func (s *server) cost(w http.ResponseWriter, r *http.Request) {
	if s.d.Bench == nil {
		http.Error(w, "no benchmark results to draw: run go run ./cmd/lab bench -out bench.json, "+
			"then go run ./cmd/lab web -bench bench.json", http.StatusNotFound)
		return
	}
	chart, err := BenchSVG(s.d.Bench)
	if err != nil {
		http.Error(w, "drawing the chart: "+err.Error(), http.StatusInternalServerError)
		return
	}
	pg := slices.ContainsFunc(s.d.Bench.Rows, func(r report.BenchRow) bool { return r.Per1000 != nil })
	s.render(w, "cost.html", map[string]any{"B": s.d.Bench, "File": s.d.BenchFile, "Chart": template.HTML(chart), "PG": pg})
}

// levels lists the stepper's trees of one scenario, the breakable ones
// first, then those that cannot be broken (correct among them).
func (s *server) levels() []*report.Tree {
	trees := slices.Clone(s.d.stepper().Trees)
	slices.SortStableFunc(trees, func(a, b *report.Tree) int {
		return boolInt(a.Breaking == 0) - boolInt(b.Breaking == 0)
	})
	return trees
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// findTree resolves v and s against the stepper's trees. While there are
// none yet, the stepper's page (page set) says how far their export is and
// reloads itself; the tree's JSON says so in a line.
func (s *server) findTree(w http.ResponseWriter, r *http.Request, page bool) (*report.Tree, bool) {
	st, note, failed := s.d.stepperState()
	if st == nil {
		if note == "" {
			note = "its trees are being exported by go test"
		}
		if !failed {
			w.Header().Set("Retry-After", strconv.Itoa(stepperReload))
		}
		if !page {
			http.Error(w, "the stepper is not ready: "+note, http.StatusServiceUnavailable)
			return nil, false
		}
		w.Header().Set("Cache-Control", "no-store")
		s.renderStatus(w, http.StatusServiceUnavailable, "wait.html", map[string]any{"Note": note, "Failed": failed, "Reload": stepperReload})
		return nil, false
	}
	v, ok := param(w, r, "v", "a variant")
	if !ok {
		return nil, false
	}
	sc, ok := param(w, r, "s", "a two-delivery scenario: Race or ConflictRace")
	if !ok {
		return nil, false
	}
	var t *report.Tree
	err := fmt.Errorf("no matrix to resolve %q × %q against", v, sc)
	s.d.Tabs.view(func(tabs []*Tab, _ int) {
		if len(tabs) > 0 {
			t, err = st.LookupTree(tabs[0].Report, v, sc)
		}
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return nil, false
	}
	return t, true
}

func (s *server) step(w http.ResponseWriter, r *http.Request) {
	if r.URL.RawQuery == "" {
		http.Redirect(w, r, "/step?v=naive/checkthenact&s=Race", http.StatusFound)
		return
	}
	t, ok := s.findTree(w, r, true)
	if !ok {
		return
	}
	s.render(w, "step.html", map[string]any{"T": t, "Levels": s.levels()})
}

func (s *server) tree(w http.ResponseWriter, r *http.Request) {
	t, ok := s.findTree(w, r, false)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(t)
}

// ReadStepper loads the stepper file the scenario tests write
// (report.Stepper.Write), for Data.
func ReadStepper(path string) (*report.Stepper, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &report.Stepper{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
