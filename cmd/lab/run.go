package main

import (
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

// goTestArgs returns the arguments of the go test command that runs the
// tests matched by runPattern and writes their report to reportPath.
func goTestArgs(runPattern, reportPath string) []string {
	return []string{"test", "./scenarios", "-run", runPattern, "-count=1", "-lab.report=" + reportPath}
}

// runTests runs the scenario tests matched by runPattern in the module at
// root and returns the report they wrote, with go test's combined output.
//
// A nil report means the tests could not run (a compile error, a missing go
// command): err says why. A report with a non-nil err means the tests ran
// and wrote their verdicts but failed, for example because a verdict
// differs from the golden matrix.
func runTests(root, runPattern string) (rep *report.Report, output []byte, err error) {
	dir, err := os.MkdirTemp("", "idemlab-report-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	reportPath := filepath.Join(dir, "report.json")

	cmd := exec.Command("go", goTestArgs(runPattern, reportPath)...)
	cmd.Dir = root
	output, runErr := cmd.CombinedOutput()

	rep, readErr := report.Read(reportPath)
	if readErr != nil {
		if runErr == nil {
			runErr = errors.New("go test wrote no report")
		}
		if !errors.Is(readErr, os.ErrNotExist) {
			runErr = fmt.Errorf("%w; reading the report: %v", runErr, readErr)
		}
		return nil, output, runErr
	}
	return rep, output, runErr
}

// announce tells, on stderr, which tests are about to run: the run itself
// is silent until it ends, and a cold first run compiles SQLite.
func announce(stderr io.Writer, runPattern string) {
	fmt.Fprintf(stderr, "running the scenario tests (a first, cold run compiles SQLite: up to a minute): go test ./scenarios -run '%s' -count=1\n", runPattern)
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
// in the registry (package variants): "correct", "naive/checkthenact", given
// with or without the naive/ or equivalent/ prefix, and with a leading ./ or a trailing
// slash, as a shell's completion leaves them. An unknown name is a usage
// error that lists the variants there are.
func resolveVariant(arg string) (string, error) {
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(strings.TrimSpace(arg)), "./"), "/")
	if name == "" {
		return "", badArgf("empty variant name; variants are: %s", strings.Join(registered(), ", "))
	}
	for _, candidate := range []string{name, "naive/" + name, "equivalent/" + name} {
		if slices.Contains(registered(), candidate) {
			return candidate, nil
		}
	}
	return "", badArgf("unknown variant %q; variants are: %s", arg, strings.Join(registered(), ", "))
}

// registered lists the variants of the registry, in the matrix's order.
func registered() []string {
	var names []string
	for _, v := range variants.All {
		names = append(names, v.Name)
	}
	return names
}

// matrixTest is the name of the test in ./scenarios whose subtests are the
// cells of the matrix, TestScenarios/<scenario>/<variant>. The command runs
// it; TestMatrixTestExists checks that the name still finds it.
const matrixTest = "TestScenarios"
