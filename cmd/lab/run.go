package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"idemlab/lab/report"
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

// normalizeVariant turns a variant as typed on the command line into its
// name in the report: "correct", or "naive/<mistake>" given with or without
// the naive/ prefix (and a leading ./ or trailing slash, as a shell's
// completion leaves it). It checks only the form of the name.
func normalizeVariant(arg string) (string, error) {
	name := filepath.ToSlash(strings.TrimSpace(arg))
	name = strings.TrimPrefix(name, "./")
	if name == "" {
		return "", badArgf("empty variant name")
	}
	name = path.Clean(name)
	if name == "correct" {
		return name, nil
	}
	if name == "naive" {
		return "", badArgf("naive is the directory of the naive variants: name one, naive/<mistake>")
	}
	mistake := strings.TrimPrefix(name, "naive/")
	if mistake == "" || mistake == "." || mistake == ".." || strings.Contains(mistake, "/") || path.IsAbs(name) {
		return "", badArgf("bad variant name %q: want correct or naive/<mistake>", arg)
	}
	return "naive/" + mistake, nil
}

// hasGoFiles reports whether dir is a directory holding at least one .go
// file.
func hasGoFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

// listVariants returns the variants present in the module at root, read
// from its directories: correct, then naive/<mistake> for each directory
// under naive/ that holds Go files, sorted.
func listVariants(root string) []string {
	var names []string
	if hasGoFiles(filepath.Join(root, "correct")) {
		names = append(names, "correct")
	}
	entries, _ := os.ReadDir(filepath.Join(root, "naive")) // no naive/ yet: no naive variants
	for _, e := range entries {
		if e.IsDir() && hasGoFiles(filepath.Join(root, "naive", e.Name())) {
			names = append(names, "naive/"+e.Name())
		}
	}
	slices.Sort(names[min(1, len(names)):])
	return names
}

// resolveVariant normalises arg and checks that the variant's package exists
// under root; the error for an unknown variant lists the ones there are.
func resolveVariant(root, arg string) (string, error) {
	name, err := normalizeVariant(arg)
	if err != nil {
		return "", err
	}
	if hasGoFiles(filepath.Join(root, filepath.FromSlash(name))) {
		return name, nil
	}
	return "", badArgf("unknown variant %q (no Go package %s/ in %s); variants are: %s",
		arg, name, root, strings.Join(listVariants(root), ", "))
}

// naiveVariants lists the naive variants under root, for error messages.
func naiveVariants(root string) string {
	names := slices.DeleteFunc(listVariants(root), func(n string) bool { return n == "correct" })
	if len(names) == 0 {
		return "(none yet: there is no naive/<mistake> package)"
	}
	return strings.Join(names, ", ")
}

// matrixTest is the name of the test in ./scenarios whose subtests are the
// cells of the matrix, TestScenarios/<scenario>/<variant>. The command runs
// it; TestMatrixTestExists checks that the name still finds it.
const matrixTest = "TestScenarios"
