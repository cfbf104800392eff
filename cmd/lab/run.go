package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"idemlab/lab/report"
	"idemlab/variants"
)

// moduleRoot returns the directory of the module's go.mod, as go env GOMOD
// reports it for the working directory, so that lab works from any
// subdirectory of the module.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run lab from the idemlab module or one of its directories")
	}
	return filepath.Dir(gomod), nil
}

// tests names the go test run a subcommand renders: the matrix test in
// ./scenarios, selected by a -run pattern, or an exercise's check in
// ./checks, which runs the matrix on the student's package.
type tests struct {
	pkg      string   // "./scenarios" or "./checks"
	run      string   // the -run pattern
	flags    []string // the package's own flags
	noShrink bool     // the output shows no Property story: do not shrink it
	// whole is set for a run of whole matrices, whose announced totals
	// the progress line shows; depth is how many slashes a cell's test
	// name has at least (cellDepth).
	whole    bool
	depth    int
	matrices int // how many matrices the run fills in
}

// matrixTests selects cells of the matrix tests of bs.
func matrixTests(bs []backend, pattern string) tests {
	return tests{pkg: "./scenarios", run: pattern, whole: pattern == prefix(bs), depth: cellDepth(bs), matrices: len(bs)}
}

// verdictsOnly is ts for an output that shows verdicts and no evidence (the
// plain matrix): rapid then stops at Property's first counterexample
// instead of shrinking it to the shortest story, which nobody would read
// and which costs ten times as long (scenarios.Shrinking).
func verdictsOnly(ts tests) tests {
	ts.noShrink = true
	return ts
}

// exerciseTests runs the check of the exercise package pkg
// ("exercises/checkthenact"): go test ./checks -exercise=checkthenact.
func exerciseTests(pkg string) tests {
	name := strings.TrimPrefix(pkg, "exercises/")
	return tests{pkg: "./checks", run: "^TestExercise$", flags: []string{"-exercise=" + name}, depth: 2, matrices: 1}
}

// goTestArgs returns the arguments of the go test command that runs ts and
// writes their report to reportPath. -vet=off: the command wants the
// verdicts, and the vet checks go test would run first are go test ./...'s
// and CI's job (they cost a fifth of a second of every run).
func goTestArgs(ts tests, reportPath string) []string {
	args := []string{"test", ts.pkg, "-run", ts.run, "-count=1", "-vet=off"}
	args = append(args, ts.flags...)
	if ts.noShrink {
		args = append(args, "-rapid.shrinktime=0s")
	}
	return append(args, "-"+report.ReportFlag+"="+reportPath)
}

// runTests runs ts in the module at root and returns the reports they
// wrote (one per matrix: SQLite's, or one per PostgreSQL level), with go
// test's combined output.
//
// No report means the tests could not run (a compile error, a missing go
// command): err says why. A report with a non-nil err means the tests ran
// and wrote their verdicts but failed, for example because a verdict
// differs from the golden matrix, or an exercise is not done yet.
//
// With a progress writer (a terminal), go test runs with -json and
// followProgress keeps a progress line on it.
func runTests(root string, ts tests, progress io.Writer) (reps []*report.Report, output []byte, err error) {
	dir, err := os.MkdirTemp("", "idemlab-report-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	reportPath := filepath.Join(dir, "report.json")

	args := goTestArgs(ts, reportPath)
	var runErr error
	if progress == nil {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		output, runErr = cmd.CombinedOutput()
	} else {
		var buf bytes.Buffer
		cmd, stream, err := startJSON(context.Background(), root, args[1:], &buf)
		if err != nil {
			return nil, nil, err
		}
		followProgress(stream, &buf, progress, ts.whole, ts.depth, ts.matrices)
		runErr = cmd.Wait()
		output = buf.Bytes()
	}

	reps, readErr := report.ReadAll(reportPath)
	if readErr != nil {
		if runErr == nil {
			runErr = errors.New("go test wrote no report")
		}
		if !errors.Is(readErr, os.ErrNotExist) {
			runErr = fmt.Errorf("%w; reading the report: %v", runErr, readErr)
		}
		return nil, output, runErr
	}
	return reps, output, runErr
}

// announce tells, on stderr, which tests are about to run: the run itself
// is silent until it ends, and a cold first run compiles SQLite.
func announce(stderr io.Writer, ts tests) {
	cmd := fmt.Sprintf("go test %s -run '%s' -count=1", ts.pkg, ts.run)
	if len(ts.flags) > 0 {
		cmd += " " + strings.Join(ts.flags, " ")
	}
	fmt.Fprintf(stderr, "running the tests (a first, cold run compiles SQLite: a minute or more):\n  %s\n", cmd)
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.SplitAfter(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "") + "\n"
}

// resolveVariant turns a variant as typed on the command line into its name
// in the registry (package variants), by the kit's one lookup
// (report.LookupVariant): "correct", "naive/checkthenact", given with or
// without the naive/ or equivalent/ prefix, in any case, with a leading ./
// or a trailing slash as a shell's completion leaves them, or as a start
// or a glob that fits one name only. An exercise's package
// ("exercises/checkthenact") is taken as it is. A name that fits none, or
// more than one, is a one-line error that says which are close — or, for
// a scenario's name given in the variant's place, that it is one.
func resolveVariant(arg string) (string, error) {
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(strings.TrimSpace(arg)), "./"), "/")
	if isExercise(name) {
		return name, nil
	}
	v, err := report.LookupVariant(registered(), arg)
	if unknown(err) {
		if cols, colErr := columns(backends[:1]); colErr == nil {
			if _, sErr := report.LookupScenario(cols, arg); sErr == nil {
				return "", usagef("%q is a scenario, not a variant", arg)
			}
		}
	}
	return v, err
}

// unknown reports whether err is a lookup's answer to a name that fits no
// name and is close to none.
func unknown(err error) bool {
	var le *report.LookupError
	return errors.As(err, &le) && len(le.Matches) == 0 && len(le.Close) == 0
}

// resolveScenario turns a scenario as typed on the command line into the
// name of a column of bs's matrix, by the kit's one lookup
// (report.LookupScenario): "ConflictRace", "CRace", "crace", "Biz*".
func resolveScenario(bs []backend, arg string) (string, error) {
	cols, err := columns(bs)
	if err != nil {
		return "", err
	}
	s, err := report.LookupScenario(cols, arg)
	if unknown(err) {
		if _, vErr := report.LookupVariant(registered(), arg); vErr == nil {
			return "", usagef("%q is a variant, not a scenario", arg)
		}
	}
	return s.Name, err
}

// columns are the scenarios of bs's first matrix, with their headings, as
// its golden file records them: the command resolves a scenario's name
// before it runs anything, without linking the scenarios themselves.
func columns(bs []backend) ([]report.ScenarioInfo, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, bs[0].golden))
	if err != nil {
		return nil, fmt.Errorf("the matrix's columns: %w", err)
	}
	rep, err := report.ParseReport(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bs[0].golden, err)
	}
	return rep.Scenarios, nil
}

// isExercise reports whether name is an exercise package of the module
// ("exercises/checkthenact", a directory of Go files), whose check, in
// ./checks, explain and permutations can run.
func isExercise(name string) bool {
	rest, ok := strings.CutPrefix(name, "exercises/")
	if !ok || rest == "" || strings.ContainsAny(rest, "/.") {
		return false
	}
	root, err := moduleRoot()
	if err != nil {
		return false
	}
	files, _ := filepath.Glob(filepath.Join(root, "exercises", rest, "*.go"))
	return len(files) > 0
}

// registered lists the variants of the registry, in the matrix's order,
// then the ones that run on the servers only (PostgreSQL's, then
// MariaDB's).
func registered() []string {
	var names []string
	for _, v := range slices.Concat(variants.All, variants.PostgresOnly, variants.MariaDBOnly) {
		names = append(names, v.Name)
	}
	return names
}

// matrixTest is the name of the test in ./scenarios whose subtests are the
// cells of the matrix, TestScenarios/<scenario>/<variant>. The command runs
// it; TestMatrixTestExists checks that the name still finds it.
const matrixTest = "TestScenarios"
