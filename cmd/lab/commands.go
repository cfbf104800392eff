package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"idemlab/lab/report"
)

// tailLines is how much of go test's output is shown when the tests ran but
// failed: the end, where go test puts its verdict.
const tailLines = 40

// testsFailed is the error of a run whose reports were written but whose
// tests failed: the verdicts are the run's, but the tests did not accept
// them. A caller prints the verdicts first, then the failure (show).
type testsFailed struct {
	output []byte // go test's output
	err    error  // how go test ended
}

func (f *testsFailed) Error() string {
	return fmt.Sprintf("go test ./scenarios failed (%v): the verdicts shown are this run's, but the tests\n"+
		"did not accept them: a verdict differs from scenarios/testdata/matrix.golden, postgres-*.golden\n"+
		"or mariadb-*.golden, or the correct variant broke a guarantee; see the go test output above", f.err)
}

// show prints the end of go test's output and returns f, once the verdicts
// are printed.
func (f *testsFailed) show(stderr io.Writer) error {
	fmt.Fprintf(stderr, "\n--- go test output (last %d lines) ---\n%s", tailLines, tail(f.output, tailLines))
	return f
}

// ranButFailed splits err from runAndReport or runBackends: a *testsFailed,
// whose reports are still to be shown, or any other error, which leaves
// nothing to show.
func ranButFailed(err error) (failed *testsFailed, other error) {
	if errors.As(err, &failed) {
		return failed, nil
	}
	return nil, err
}

// runAndReport runs ts and returns their reports with go test's output. If
// they could not run, it prints the whole output to stderr and returns no
// report and an error. If they ran but failed, it returns the reports and a
// *testsFailed (see ranButFailed).
func runAndReport(stderr io.Writer, root string, ts tests) (reps []*report.Report, output []byte, err error) {
	announce(stderr, ts)
	reps, output, runErr := runTests(root, ts, terminal(stderr))
	switch {
	case reps == nil:
		stderr.Write(output)
		return nil, output, fmt.Errorf("the scenario tests could not run: %v", runErr)
	case runErr != nil:
		return reps, output, &testsFailed{output: output, err: runErr}
	}
	return reps, output, nil
}

// runBackends runs ts, tests of the matrices bs (matrixTests), and returns
// the reports of bs, in bs's order, or a *testsFailed with them (see
// ranButFailed). Without a server for a server's matrices it runs nothing
// and says what to run first (needServer).
func runBackends(stderr io.Writer, bs []backend, ts tests) ([]*report.Report, error) {
	if err := needServer(bs); err != nil {
		return nil, err
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	all, output, err := runAndReport(stderr, root, ts)
	if all == nil {
		return nil, err
	}
	reps, pickErr := pick(all, bs)
	if pickErr != nil {
		stderr.Write(output)
		return nil, fmt.Errorf("%v: see the go test output above", pickErr)
	}
	return reps, err
}

// cmdMatrix runs the whole matrices of bs and prints them, as text (with
// the evidence of every ✗ if asked) or as JSON.
func cmdMatrix(stdout, stderr io.Writer, bs []backend, asJSON, evidence bool) error {
	ts := matrixTests(bs, prefix(bs))
	if !asJSON && !evidence {
		ts = verdictsOnly(ts)
	}
	reps, err := runBackends(stderr, bs, ts)
	failed, err := ranButFailed(err)
	if err != nil {
		return err
	}
	text := renderMatrices(reps, evidence, backendFlag(bs))
	if asJSON {
		data, err := renderJSON(reps)
		if err != nil {
			return err
		}
		text = string(data)
	}
	return printed(stdout, stderr, text, failed)
}

// printed writes text, what a run's reports show, to stdout, then, if the
// run's tests failed, the end of their output (testsFailed.show).
func printed(stdout, stderr io.Writer, text string, failed *testsFailed) error {
	if _, err := io.WriteString(stdout, text); err != nil {
		return err
	}
	if failed != nil {
		return failed.show(stderr)
	}
	return nil
}

// cmdPermutations runs one variant's row and lists the interleavings its
// concurrent scenarios enumerated: three schedules an outcome, or all.
func cmdPermutations(stdout, stderr io.Writer, bs []backend, variantArg string, all bool) error {
	return runVariant(stdout, stderr, bs, variantArg,
		func(variant string) string { return report.Pattern(prefix(bs), "", variant) },
		func(rep *report.Report, variant string) (string, error) { return renderPermutations(rep, variant, all) })
}

// cmdRow runs one variant's row and prints each cell with its evidence.
func cmdRow(stdout, stderr io.Writer, bs []backend, variantArg string) error {
	return runVariant(stdout, stderr, bs, variantArg,
		func(variant string) string { return report.Pattern(prefix(bs), "", variant) }, renderRow)
}

// cmdColumn runs one scenario's column and prints each cell with its
// evidence.
func cmdColumn(stdout, stderr io.Writer, bs []backend, scenarioArg string) error {
	scenario, err := resolveScenario(bs, scenarioArg)
	if err != nil {
		return err
	}
	reps, err := runBackends(stderr, bs, matrixTests(bs, report.Pattern(prefix(bs), scenario, "")))
	failed, err := ranButFailed(err)
	if err != nil {
		return err
	}
	text, err := each(reps, func(rep *report.Report) (string, error) { return renderColumn(rep, scenario) })
	if err != nil {
		return err
	}
	return printed(stdout, stderr, text, failed)
}

// cmdExplain runs one cell and prints its verdict, evidence and transcript.
func cmdExplain(stdout, stderr io.Writer, bs []backend, variantArg, scenarioArg string) error {
	variant, err := resolveVariant(variantArg)
	if err != nil {
		return err
	}
	// An exercise's check has guarantees of its own besides the matrix's
	// (businesskey's OneActivation, sourcescope's SecondSourceRepeat), which
	// the matrix's golden file does not list: its own report, once the
	// check ran, resolves the name (see renderExplain).
	scenario := scenarioArg
	if !strings.HasPrefix(variant, "exercises/") {
		if scenario, err = resolveScenario(bs, scenarioArg); err != nil {
			return err
		}
	}
	return runVariant(stdout, stderr, bs, variantArg,
		func(variant string) string { return report.Pattern(prefix(bs), scenario, variant) },
		func(rep *report.Report, variant string) (string, error) { return renderExplain(rep, variant, scenario) })
}

// each renders every report with render, each under its backend's name
// when there are several, and joins them; an error from any stops it.
func each(reps []*report.Report, render func(rep *report.Report) (string, error)) (string, error) {
	var parts []string
	for _, rep := range reps {
		text, err := render(rep)
		if err != nil {
			if len(reps) > 1 {
				return "", fmt.Errorf("%s: %w", rep.BackendName(), err)
			}
			return "", err
		}
		parts = append(parts, titled(rep, len(reps) > 1, text))
	}
	return strings.Join(parts, "\n"), nil
}

// runVariant is what explain and permutations share: resolve the variant,
// run the tests that pattern selects for it, and print what render makes of
// their report.
func runVariant(stdout, stderr io.Writer, bs []backend, variantArg string, pattern func(variant string) string, render func(rep *report.Report, variant string) (string, error)) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	variant, err := resolveVariant(variantArg)
	if err != nil {
		return err
	}
	var reps []*report.Report
	exercise := strings.HasPrefix(variant, "exercises/")
	if exercise {
		if onServer(bs) {
			return usagef("an exercise's check runs on SQLite only: leave out -backend")
		}
		// An exercise's check runs the whole matrix on it, and writes the
		// same report; the check failing means the exercise is not done.
		reps, _, err = runAndReport(stderr, root, exerciseTests(variant))
	} else {
		reps, err = runBackends(stderr, bs, matrixTests(bs, pattern(variant)))
	}
	failed, err := ranButFailed(err)
	if err != nil {
		return err
	}
	text, err := each(reps, func(rep *report.Report) (string, error) { return render(rep, variant) })
	if err != nil {
		return err
	}
	if failed == nil || !exercise {
		return printed(stdout, stderr, text, failed)
	}
	// An exercise's check fails until the work is done: that is what the
	// student came to see, not an error of the command.
	if err := printed(stdout, stderr, text, nil); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "(the check still fails: the exercise is not done yet; go test ./checks -exercise=%s)\n", strings.TrimPrefix(variant, "exercises/"))
	return nil
}

// cmdDiff prints a naive variant's package against correct/, with
// git diff --no-index (or diff -ru where git is missing) run in the module
// root so that the paths read correct/... and naive/<mistake>/....
func cmdDiff(stdout, stderr io.Writer, variantArg string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	variant, err := resolveVariant(variantArg)
	if err != nil {
		return err
	}
	if variant == "correct" {
		return usagef("diff compares a naive variant with correct, not correct with itself: diff checkthenact")
	}
	// Only the code that a variant shares with correct: doc.go and the
	// example are prose, and would bury the mistake. A variant holds only
	// the files its mistake changes; what it takes from elsewhere its
	// variant.go names.
	assembly, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(variant), "variant.go"))
	if err != nil {
		return err
	}
	for _, file := range codeFiles {
		twin := codeTwin(file)
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(variant), file)); err != nil {
			if owner := takenFrom(string(assembly), file); owner != "" {
				fmt.Fprintf(stdout, "%s: as in %s/ (the mistake is not here)\n", file, owner)
			}
			continue // a variant without PostgreSQL files runs on SQLite only
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(twin))); err != nil {
			twin = os.DevNull // a file correct/ has no twin of: all of it is the mistake
		}
		if samePackageFile(root, twin, path.Join(variant, file)) {
			fmt.Fprintf(stdout, "%s: as in %s (the mistake is not here)\n", file, path.Dir(twin)+"/")
			continue
		}
		if err := diffFile(stdout, stderr, root, twin, path.Join(variant, file)); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\nthe mistake, in prose: go doc ./%s\n", variant)
	return nil
}

// codeFiles are the files a variant may hold of its own, in the order a
// reader should see them; postgres.go and retry.go only where the variant's
// mistake on PostgreSQL is in them (naive/insertorreplace's upsert,
// naive/serialasduplicate's retry), mariadb.go where it is on MariaDB
// (naive/deadlockasduplicate). variant.go is left out: it names the
// variant and its mistake, and says which parts come from correct/.
var codeFiles = []string{"schema.go", "process.go", "postgres.go", "retry.go", "mariadb.go"}

// codeTwin is the file a variant's file is compared with: correct/'s file
// of the same name, or, for the retry, the one in postgres/ that correct/
// and the variants share.
func codeTwin(file string) string {
	if file == "retry.go" {
		return "postgres/retry.go"
	}
	return path.Join("correct", file)
}

// takenFrom reads a variant's variant.go for the package whose schema or
// handler it runs where it has no file of its own: "correct" for
// correct.Schema, "naive/checkthenact" for checkthenact.New. It returns ""
// for a file that is not the schema or the handler.
func takenFrom(assembly, file string) string {
	var m []string
	switch file {
	case "schema.go":
		m = regexp.MustCompile(`Schema:\s+(\w+)\.Schema,`).FindStringSubmatch(assembly)
	case "process.go":
		m = regexp.MustCompile(`return (\w+)\.New\(db\)`).FindStringSubmatch(assembly)
	}
	if m == nil {
		return ""
	}
	imp := regexp.MustCompile(`"idemlab/([\w/]*\b` + m[1] + `)"`).FindStringSubmatch(assembly)
	if imp == nil {
		return m[1]
	}
	return imp[1]
}

// samePackageFile reports whether two files are equal but for their package
// clause, so that diff can skip a file where the mistake is not.
func samePackageFile(root, a, b string) bool {
	da, errA := os.ReadFile(filepath.Join(root, filepath.FromSlash(a)))
	db, errB := os.ReadFile(filepath.Join(root, filepath.FromSlash(b)))
	if errA != nil || errB != nil {
		return false
	}
	_, restA, okA := strings.Cut(string(da), "\n")
	_, restB, okB := strings.Cut(string(db), "\n")
	return okA && okB && strings.HasPrefix(string(da), "package ") && strings.HasPrefix(string(db), "package ") && restA == restB
}

// diffFile shows one file of a variant against its twin in correct/, with
// git diff --no-index, or diff -u where git is missing.
func diffFile(stdout, stderr io.Writer, root, correctFile, variantFile string) error {
	var cmd *exec.Cmd
	if _, err := exec.LookPath("git"); err == nil {
		cmd = exec.Command("git", "--no-pager", "diff", "--no-index", "--no-prefix", "--", correctFile, variantFile)
	} else {
		cmd = exec.Command("diff", "-u", correctFile, variantFile)
	}
	cmd.Dir = root
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	err := cmd.Run()
	// Both git diff --no-index and diff exit 1 when the files differ,
	// which is what a naive variant's do.
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}
