package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"idemlab/lab/report"
	"idemlab/variants"
	"idemlab/workshop"
)

// The workshop: go run ./cmd/lab web serves the matrix, the transcripts, the
// diffs, the claims and the race stepper on a local page; go run ./cmd/lab
// step plays a race in the terminal. Like every subcommand they render what
// one go test run exported — here the report and the stepper file, the tree
// of every schedule of each race (TestStepper) — because a scheduled run
// needs a testing/synctest bubble, which only a test has.

// webAddr is where the page is served unless -addr says otherwise: on
// localhost, and not on the demo receiver's port (8080, cmd/receiver), so
// that a workshop can run both at once.
const webAddr = "127.0.0.1:8090"

// recordedBench is the run of go run ./cmd/lab bench the cost page draws
// unless -bench names another: the one docs/performance.md shows.
const recordedBench = "docs/bench.json"

// stepperTest is the test in ./scenarios that exports the stepper's trees.
const stepperTest = "TestStepper"

// cmdWeb serves the page at once and fills it in: it lays out every
// backend's matrix from its golden file, starts serving, and then runs go
// test for each part in turn — the stepper's trees (first, so that the
// stepper is ready before the matrix's first cell), SQLite's matrix, with IDEMLAB_PG PostgreSQL's, with
// IDEMLAB_MARIADB MariaDB's — adding each cell to the page as go test
// reports it finished. A cell has no verdict on the page until its run has given
// one; without its server a server's tabs show their golden files'
// verdicts, labelled as recorded.
//
// addr is where to serve (-addr): keep it on localhost unless the room
// needs it. benchFile is the bench results the cost page draws (-bench);
// "" is docs/bench.json, a run recorded in the repository.
func cmdWeb(stdout, stderr io.Writer, addr, benchFile string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	live := liveServers()
	tabs, err := webTabs(root, live)
	if err != nil {
		return err
	}
	claims, err := os.ReadFile(filepath.Join(root, "CLAIMS.md"))
	if err != nil {
		return err
	}
	data := &workshop.Data{Tabs: tabs, Claims: string(claims)}
	if benchFile == "" {
		benchFile = filepath.Join(root, recordedBench)
	}
	if data.Bench, err = report.ReadBench(benchFile); err != nil {
		return fmt.Errorf("the cost page's figures: %w", err)
	}
	data.BenchFile = benchFile
	h, err := workshop.Handler(data)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w\nanother server on that port? pick another with -addr 127.0.0.1:PORT,\n"+
			"or -addr 127.0.0.1:0 for a free one", err)
	}
	srv := newServer(h)
	fmt.Fprintf(stdout, "serving the workshop on http://%s/ (the stepper: http://%s/step); Ctrl-C stops it\n", ln.Addr(), ln.Addr())
	for _, srv := range []*dbServer{postgresServer, mariadbServer} {
		if !live[srv] {
			fmt.Fprintf(stdout, "%s tabs show recorded verdicts; to run them live: %s\n", srv.name, srv.liveWeb())
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	go func() { data.SetDiffs(webDiffs()) }()
	go fillTabs(ctx, stderr, root, data, live)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// liveServers are the servers whose variable is set: their tabs run live.
func liveServers() map[*dbServer]bool {
	return map[*dbServer]bool{
		postgresServer: os.Getenv(postgresServer.env) != "",
		mariadbServer:  os.Getenv(mariadbServer.env) != "",
	}
}

// liveWeb is the command that serves the page with srv's tabs live.
func (srv *dbServer) liveWeb() string {
	if srv == postgresServer {
		return srv.env + "='" + exampleDSN + "' go run ./cmd/lab web"
	}
	return srv.setIt + "; go run ./cmd/lab web"
}

// webTabs lays out a tab per backend from its golden file: empty cells on
// a tab that will run live (SQLite's, and a server's in live), the
// recorded verdicts on one that cannot.
func webTabs(root string, live map[*dbServer]bool) (*workshop.Tabs, error) {
	var tabs []*workshop.Tab
	for _, b := range backends {
		data, err := os.ReadFile(filepath.Join(root, b.golden))
		if err != nil {
			return nil, err
		}
		rep, err := report.ParseReport(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.golden, err)
		}
		rep.Backend = b.name
		t := &workshop.Tab{Slug: b.flag, Report: rep, Rerun: "go run ./cmd/lab"}
		if b.srv != nil {
			t.Rerun = "go run ./cmd/lab -backend=" + b.flag
		}
		if b.srv == nil || live[b.srv] {
			for i := range rep.Variants {
				rep.Variants[i].Results = map[string]*report.Cell{}
			}
		} else {
			rep.Recorded = b.golden
			t.Rerun = b.srv.liveWeb()
		}
		tabs = append(tabs, t)
	}
	return workshop.NewTabs(tabs...), nil
}

// webDiffs is every variant's diff against correct/, as diff prints it.
func webDiffs() map[string]string {
	diffs := map[string]string{}
	for _, name := range registered() {
		if name == "correct" {
			continue
		}
		var out, errs bytes.Buffer
		if err := cmdDiff(&out, &errs, name); err != nil {
			out.WriteString(fmt.Sprintf("diff %s failed: %v %s", name, err, errs.String()))
		}
		diffs[name] = out.String()
	}
	return diffs
}

// fillTabs fills the page in: first the stepper's trees, so that the
// stepper is ready before the matrix's first cell; then SQLite's matrix, cell by cell as
// they finish; then, each with its server, PostgreSQL's three levels and
// MariaDB's four.
func fillTabs(ctx context.Context, stderr io.Writer, root string, data *workshop.Data, live map[*dbServer]bool) {
	dir, err := os.MkdirTemp("", "idemlab-web-")
	if err != nil {
		data.Tabs.Update("sqlite", func(t *workshop.Tab) { t.Problem = err.Error() })
		data.StepperFailed(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := exportStepper(ctx, root, filepath.Join(dir, "stepper.json"), data); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "%v\nwarning: the stepper's export failed\n", err)
	}
	liveRun(ctx, stderr, root, data, dir, backends[:1], "^"+matrixTest+"$")
	for _, srv := range []*dbServer{postgresServer, mariadbServer} {
		if live[srv] && ctx.Err() == nil {
			bs := on(srv)
			liveRun(ctx, stderr, root, data, dir, bs, prefix(bs))
		}
	}
}

// stepperTrees is how many trees TestStepper exports: one per variant of
// the SQLite registry in each of its two races, Race and ConflictRace.
var stepperTrees = 2 * len(variants.All)

// exportStepper runs TestStepper alone, writing the stepper's trees to
// path, and hands them to the page; until then it tells the page how far
// the export is (compiling, then trees exported of stepperTrees), and if
// they do not come, why. A failed run is returned with the end of go
// test's output (the trees it wrote, if any, are served all the same).
func exportStepper(ctx context.Context, root, path string, data *workshop.Data) error {
	data.StepperProgress("go test is compiling the scenario tests (its first run compiles SQLite: a minute or more)")
	var output bytes.Buffer
	cmd, stream, err := startJSON(ctx, root, []string{"./scenarios", "-run", "^" + stepperTest + "$", "-count=1", "-vet=off",
		"-" + report.StepperFlag + "=" + path}, &output)
	if err != nil {
		data.StepperFailed(err)
		return err
	}
	exported := 0
	events(stream, &output, func(e testEvent) {
		// A tree is a subtest TestStepper/<race>/<variant>.
		if !strings.HasPrefix(e.Test, stepperTest+"/") || strings.Count(e.Test, "/") < 2 {
			return
		}
		switch e.Action {
		case "run":
			if exported > 0 {
				return
			}
		case "pass", "fail", "skip":
			exported++
		default:
			return
		}
		data.StepperProgress(fmt.Sprintf("exporting every schedule of the two races, a tree per variant: %d of %d trees",
			exported, max(stepperTrees, exported)))
	})
	runErr := cmd.Wait()
	st, readErr := workshop.ReadStepper(path)
	if readErr == nil {
		data.SetStepper(st)
	}
	if runErr == nil && readErr == nil {
		return nil
	}
	why := fmt.Errorf("go test -run %s failed (%w)", stepperTest, errors.Join(runErr, readErr))
	if readErr != nil {
		data.StepperFailed(why)
	}
	return fmt.Errorf("%w; the end of its output:\n%s", why, tail(output.Bytes(), tailLines))
}

// liveRun runs one go test of the matrices bs, adding every cell to its
// tab the moment go test says it finished, and at the end puts the report
// the tests wrote in place of the cells gathered on the way.
func liveRun(ctx context.Context, stderr io.Writer, root string, data *workshop.Data, dir string, bs []backend, run string) {
	cells := filepath.Join(dir, "cells-"+bs[0].flag)
	reportPath := filepath.Join(dir, "report-"+bs[0].flag+".json")
	problem := func(msg string) {
		for _, b := range bs {
			data.Tabs.Update(b.flag, func(t *workshop.Tab) { t.Problem = msg })
		}
	}
	if err := os.MkdirAll(cells, 0o755); err != nil {
		problem(err.Error())
		return
	}
	var output bytes.Buffer
	cmd, stream, err := startJSON(ctx, root, []string{"./scenarios", "-run", run, "-count=1", "-vet=off",
		"-" + report.ReportFlag + "=" + reportPath, "-" + report.CellsFlag + "=" + cells}, &output)
	if err != nil {
		problem(err.Error())
		return
	}
	progress := terminal(stderr)
	total, done := 0, 0
	events(stream, &output, func(e testEvent) {
		if _, n, ok := strings.Cut(e.Output, report.CellsMarker); ok {
			more, _ := strconv.Atoi(strings.TrimSpace(n))
			total += more
			slug := bs[0].flag
			if onServer(bs) {
				slug = bs[0].srv.flag + "-" + strings.Split(e.Test, "/")[min(1, strings.Count(e.Test, "/"))]
			}
			data.Tabs.Update(slug, func(t *workshop.Tab) { t.Total = more })
		}
		if (e.Action != "pass" && e.Action != "fail") || strings.Count(e.Test, "/") < cellDepth(bs) {
			return
		}
		f, err := report.ReadFinished(cells, e.Test)
		if err != nil {
			return // a scenario's subtest, or a test of the stepper
		}
		done++
		data.Tabs.Update(backendNamed(f.Backend).flag, func(t *workshop.Tab) { t.Report.Add(f) })
		if progress != nil {
			fmt.Fprintf(progress, "\r\033[K%s: %d of %d cells done", bs[0].name, done, total)
		}
	})
	if progress != nil {
		fmt.Fprint(progress, "\r\033[K")
	}
	runErr := cmd.Wait()
	reps, readErr := report.ReadAll(reportPath)
	for _, b := range bs {
		rep := report.Backend(reps, b.name)
		data.Tabs.Update(b.flag, func(t *workshop.Tab) {
			switch {
			case readErr != nil || rep == nil:
				t.Problem = fmt.Sprintf("go test wrote no report (%v); the end of its output: %s", errors.Join(runErr, readErr), tail(output.Bytes(), 5))
			default:
				t.Report, t.Done = rep, true
				if runErr != nil {
					t.Problem = fmt.Sprintf("%v: a verdict differs from %s, or correct broke a guarantee; %s", runErr, b.golden, "see the terminal")
				}
			}
		})
	}
	if runErr != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "%s\nwarning: go test %s failed (%v); the page shows what it found\n", tail(output.Bytes(), tailLines), run, runErr)
	}
}

// newServer bounds what a client may hold: headers, slow requests, idle
// connections.
func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}

// cmdStep plays one race in the terminal: it exports that race's tree (one
// cell of TestStepper) and walks it with the student's choices. args are
// the variant and the race, Race unless args name ConflictRace.
func cmdStep(stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	variant, err := resolveVariant(args[0])
	if err != nil {
		return err
	}
	race := "Race"
	if len(args) > 1 {
		race = args[1]
	}
	scenario, err := resolveScenario(backends[:1], race)
	if err != nil {
		return err
	}
	if scenario != "Race" && scenario != "ConflictRace" {
		return usagef("step plays a race of two deliveries, Race or ConflictRace (CRace); %s is not one", scenario)
	}
	if strings.HasPrefix(variant, "exercises/") {
		return usagef("step plays the kit's variants (go run ./cmd/lab step naive/checkthenact), not exercises")
	}
	tree, err := exportTree(stderr, root, variant, scenario)
	if err != nil {
		return err
	}
	return workshop.Play(stdin, stdout, tree)
}

// exportTree runs one cell of TestStepper and returns its tree.
func exportTree(stderr io.Writer, root, variant, scenario string) (*report.Tree, error) {
	dir, err := os.MkdirTemp("", "idemlab-step-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "stepper.json")
	pattern := report.CellPattern(stepperTest, scenario, variant)
	fmt.Fprintf(stderr, "exporting every schedule (a cold first run compiles SQLite: a minute or more): go test ./scenarios -run '%s' -lab.stepper=FILE\n", pattern)
	cmd := exec.Command("go", "test", "./scenarios", "-run", pattern, "-count=1", "-vet=off", "-"+report.StepperFlag+"="+path)
	cmd.Dir = root
	out, runErr := cmd.CombinedOutput()
	st, err := workshop.ReadStepper(path)
	if err != nil || st.Tree(variant, scenario) == nil {
		stderr.Write(out)
		return nil, fmt.Errorf("the stepper's export failed (%v): see the go test output above", errors.Join(runErr, err))
	}
	return st.Tree(variant, scenario), nil
}
