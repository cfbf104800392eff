package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"idemlab/lab/report"
	"idemlab/workshop"
)

// The workshop: go run ./cmd/lab web serves the matrix, the transcripts, the
// diffs, the claims and the race stepper on a local page; go run ./cmd/lab
// step plays a race in the terminal. Like every subcommand they render what
// one go test run exported — here the report and the stepper file, the tree
// of every schedule of each race (TestStepper) — because a scheduled run
// needs a testing/synctest bubble, which only a test has.

// stepperTest is the test in ./scenarios that exports the stepper's trees.
const stepperTest = "TestStepper"

// cmdWeb runs the matrix and the stepper export in one go test run, then
// serves the pages on addr until interrupted.
func cmdWeb(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("web", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:8080", "the address to serve on; keep it on localhost unless the room needs it")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usagef("web takes only -addr: go run ./cmd/lab web [-addr 127.0.0.1:8080]")
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "idemlab-web-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	stepperPath := filepath.Join(dir, "stepper.json")
	ts := tests{pkg: "./scenarios", run: "^(" + matrixTest + "|" + stepperTest + ")$", flags: []string{"-lab.stepper=" + stepperPath}}
	reps, output, failed, err := runAndReport(stderr, root, ts)
	if err != nil {
		return err
	}
	rep := reps[0]
	if failed != nil {
		fmt.Fprintf(stderr, "%s\nwarning: the tests failed; the page shows their verdicts anyway (%v)\n", tail(output, tailLines), failed)
	}
	data, err := webData(root, rep, stepperPath)
	if err != nil {
		return err
	}
	h, err := workshop.Handler(data)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("%v: another server on that port? try -addr 127.0.0.1:0 for a free one", err)
	}
	srv := newServer(h)
	fmt.Fprintf(stdout, "serving the workshop on http://%s/ (the stepper: http://%s/step); Ctrl-C stops it\n", ln.Addr(), ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
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

// webData gathers what the pages show: the report, the stepper's trees,
// every variant's diff against correct/ (as the diff subcommand prints it)
// and CLAIMS.md.
func webData(root string, rep *report.Report, stepperPath string) (*workshop.Data, error) {
	st, err := workshop.ReadStepper(stepperPath)
	if err != nil {
		return nil, fmt.Errorf("reading the stepper's trees: %w", err)
	}
	claims, err := os.ReadFile(filepath.Join(root, "CLAIMS.md"))
	if err != nil {
		return nil, err
	}
	diffs := map[string]string{}
	for _, v := range rep.Variants {
		if v.Name == "correct" {
			continue
		}
		var out, errs bytes.Buffer
		if err := cmdDiff(&out, &errs, v.Name); err != nil {
			return nil, fmt.Errorf("diff %s: %v %s", v.Name, err, errs.String())
		}
		diffs[v.Name] = out.String()
	}
	return &workshop.Data{Report: rep, Stepper: st, Diffs: diffs, Claims: string(claims)}, nil
}

// cmdStep plays one race in the terminal: it exports that race's tree (one
// cell of TestStepper) and walks it with the student's choices.
func cmdStep(stdin io.Reader, stdout, stderr io.Writer, variantArg, scenario string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	variant, err := resolveVariant(variantArg)
	if err != nil {
		return err
	}
	if scenario != "Race" && scenario != "ConflictRace" {
		return badArgf("step plays a race of two deliveries: Race or ConflictRace, not %q", scenario)
	}
	if strings.HasPrefix(variant, "exercises/") {
		return badArgf("step plays the kit's variants (go run ./cmd/lab step naive/checkthenact Race), not exercises")
	}
	tree, err := exportTree(stderr, root, variant, scenario)
	if err != nil {
		return err
	}
	return workshop.Play(stdin, stdout, tree)
}

// exportTree runs one cell of TestStepper and returns its tree.
func exportTree(stderr io.Writer, root, variant, scenario string) (*workshop.Tree, error) {
	dir, err := os.MkdirTemp("", "idemlab-step-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "stepper.json")
	pattern := report.CellPattern(stepperTest, scenario, variant)
	fmt.Fprintf(stderr, "exporting every schedule (a cold first run compiles SQLite: up to a minute): go test ./scenarios -run '%s' -lab.stepper=FILE\n", pattern)
	cmd := exec.Command("go", "test", "./scenarios", "-run", pattern, "-count=1", "-lab.stepper="+path)
	cmd.Dir = root
	out, runErr := cmd.CombinedOutput()
	st, err := workshop.ReadStepper(path)
	if err != nil || st.Tree(variant, scenario) == nil {
		stderr.Write(out)
		return nil, fmt.Errorf("the stepper's export failed (%v): see the go test output above", errors.Join(runErr, err))
	}
	return st.Tree(variant, scenario), nil
}
