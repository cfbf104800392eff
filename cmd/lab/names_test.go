package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"idemlab/lab/report"
	"idemlab/workshop"
)

// TestScenarioNames holds the command to the names the matrix shows: a
// column by its heading or its name, in any case, with or without a
// limit's *, and by a start or a glob that fits it alone.
func TestScenarioNames(t *testing.T) {
	for arg, want := range map[string]string{
		"CRace":           "ConflictRace",
		"crace":           "ConflictRace",
		"ConflictRace":    "ConflictRace",
		"conflictrace":    "ConflictRace",
		"race":            "Race", // a whole name, though CRace ends with it
		"Race":            "Race",
		"Cncl":            "Cancel",
		"cncl":            "Cancel",
		"Biz*":            "BusinessKey",
		"biz":             "BusinessKey",
		"Biz":             "BusinessKey",
		"Mail*":           "SideEffect",
		"422":             "ConflictOverHTTP",
		"Rollb":           "Rollback",
		"Sum":             "Summary",
		"Lock*":           "LockTimeout",
		"*Timeout":        "LockTimeout",
		" Duplicate ":     "Duplicate",
		"payloadconflict": "PayloadConflict",
	} {
		if got, err := resolveScenario(backends[:1], arg); err != nil || got != want {
			t.Errorf("resolveScenario(%q) = %q, %v, want %q, nil", arg, got, err, want)
		}
	}
	for arg, says := range map[string]string{
		"Con":    `ambiguous scenario "Con": PayloadConflict, Concurrent, ConflictRace or ConflictOverHTTP`,
		"*race*": `ambiguous scenario "*race*": Race or ConflictRace`,
		"Racee":  `unknown scenario "Racee"; did you mean Race?`,
		"Dupe":   "did you mean Duplicate?",
		"zzzz":   `unknown scenario "zzzz", and no scenario's name is close to it`,
		"":       "no scenario named; give one, e.g. Duplicate, ",
	} {
		_, err := resolveScenario(backends[:1], arg)
		var le *report.LookupError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), says) || !oneLine("lab: "+err.Error()) {
			t.Errorf("resolveScenario(%q) error = %v, want one line of at most %d columns saying %q", arg, err, report.Width, says)
		}
	}
}

// TestVariantNames: a row with or without naive/, in any case, as a
// shell's completion leaves a directory, or by a start or a glob that fits
// it alone.
func TestVariantNames(t *testing.T) {
	for arg, want := range map[string]string{
		"checkthenact":          "naive/checkthenact",
		"CheckThenAct":          "naive/checkthenact",
		"naive/checkthenact":    "naive/checkthenact",
		"NAIVE/CHECKTHENACT":    "naive/checkthenact",
		"./naive/checkthenact/": "naive/checkthenact",
		"checkthenacttx":        "naive/checkthenacttx",
		"plainbegin":            "equivalent/plainbegin",
		"correct":               "correct",
		"mark":                  "naive/markfirst",
		"insertorre*":           "naive/insertorreplace",
		"naive/busy*":           "naive/busyasduplicate",
		"foundrows":             "naive/foundrows", // a row of MariaDB's matrices only
	} {
		if got, err := resolveVariant(arg); err != nil || got != want {
			t.Errorf("resolveVariant(%q) = %q, %v, want %q, nil", arg, got, err, want)
		}
	}
	for arg, says := range map[string]string{
		"check":    `ambiguous variant "check": naive/checkthenact or naive/checkthenacttx`,
		"insert*":  `ambiguous variant "insert*": naive/insertorignore, naive/insertorreplace or naive/insertignore`,
		"markfrst": "did you mean naive/markfirst?",
	} {
		_, err := resolveVariant(arg)
		if err == nil || !strings.Contains(err.Error(), says) || !oneLine("lab: "+err.Error()) {
			t.Errorf("resolveVariant(%q) error = %v, want one line saying %q", arg, err, says)
		}
	}
}

// oneLine reports whether s is a single line that fits report.Width.
func oneLine(s string) bool {
	return !strings.Contains(s, "\n") && utf8.RuneCountInString(s) <= report.Width
}

// TestUsageErrorShape runs command lines that are wrong in every way the
// command can tell before it runs a test: each answers exit status 2 and
// exactly two lines on stderr, the error (saying what to do) and the usage
// line of the subcommand, never the whole help.
func TestUsageErrorShape(t *testing.T) {
	for _, tt := range []struct {
		args        []string
		says, usage string
	}{
		{[]string{"column"}, "column takes one scenario, not 0: none given", "column SCENARIO"},
		{[]string{"explain", "correct"}, `explain takes a variant and a scenario, not 1: "correct"`, "explain VARIANT SCENARIO"},
		{[]string{"row"}, "row takes one variant", "row VARIANT"},
		{[]string{"diff"}, "diff takes one variant", "diff VARIANT"},
		{[]string{"bench", "x"}, "bench takes no arguments", "bench"},
		{[]string{"web", "x"}, "web takes no arguments, only -addr", "web [-addr"},
		{[]string{"step"}, "step takes a variant and, if not Race, the race", "step VARIANT [Race | ConflictRace]"},
		{[]string{"step", "correct", "Race", "x"}, "step takes", "step VARIANT"},
		{[]string{"tour", "9"}, `the tour has steps 1 to `, "tour [N] [-answer]"},
		{[]string{"tour", "1", "2"}, "tour takes at most a step's number", "tour [N]"},
		{[]string{"permutations"}, "permutations takes one variant", "permutations [-all] VARIANT"},
		{[]string{"column", "Racee"}, `unknown scenario "Racee"; did you mean Race?`, "column SCENARIO"},
		{[]string{"column", "con"}, `ambiguous scenario "con": `, "column SCENARIO"},
		{[]string{"explain", "nosuch", "race"}, `unknown variant "nosuch"`, "explain VARIANT SCENARIO"},
		{[]string{"explain", "checkthenact", "zzz"}, `unknown scenario "zzz"`, "explain VARIANT SCENARIO"},
		{[]string{"row", "naive"}, `ambiguous variant "naive": `, "row VARIANT"},
		{[]string{"explain", "Race", "checkthenact"}, `"Race" is a scenario, not a variant`, "explain VARIANT SCENARIO"},
		{[]string{"step", "race"}, `"race" is a scenario, not a variant`, "step VARIANT"},
		{[]string{"column", "checkthenact"}, `"checkthenact" is a variant, not a scenario`, "column SCENARIO"},
		{[]string{"step", "checkthenact", "cncl"}, "step plays a race of two deliveries, Race or ConflictRace (CRace); Cancel is not one", "step VARIANT"},
		{[]string{"diff", "correct"}, "diff compares a naive variant with correct, not correct with itself", "diff VARIANT"},
		{[]string{"colum", "race"}, `unknown subcommand "colum"; did you mean column?`, "[SUBCOMMAND ARGS]"},
		{[]string{"frobnicate"}, `unknown subcommand "frobnicate"`, "[SUBCOMMAND ARGS]"},
		{[]string{"-nope"}, "flag provided but not defined: -nope", "[-evidence | -json]"},
		{[]string{"explain", "correct", "Race", "-nope"}, "flag provided but not defined: -nope", "explain VARIANT SCENARIO"},
		{[]string{"-backend=mysql"}, `unknown -backend "mysql"`, "[-evidence | -json]"},
		{[]string{"-backend=pg", "web"}, "-backend applies to the matrix, row, column, explain and permutations", "web [-addr"},
		{[]string{"-json", "explain", "correct", "Race"}, "-json and -evidence apply only to the matrix", "explain VARIANT SCENARIO"},
		{[]string{"row", "markfirst", "-evidence"}, "-json and -evidence apply only to the matrix", "row VARIANT"},
		{[]string{"row", "markfirst", "-all"}, "-all applies only to permutations", "row VARIANT"},
		{[]string{"explain", "correct", "Race", "-addr", ":1"}, "-addr applies only to web", "explain VARIANT SCENARIO"},
		{[]string{"column", "Race", "-answer"}, "-answer applies only to tour", "column SCENARIO"},
		{[]string{"row", "markfirst", "-bench", "b.json"}, "-bench applies only to web", "row VARIANT"},
		{[]string{"help", "nosuch"}, `unknown subcommand "nosuch"`, "help [SUBCOMMAND]"},
	} {
		var stdout, stderr bytes.Buffer
		status := run(tt.args, &stdout, &stderr)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		ok := status == exitUsage && stdout.Len() == 0 && len(lines) == 2 &&
			strings.HasPrefix(lines[0], "lab: ") && strings.Contains(lines[0], tt.says) &&
			strings.HasPrefix(lines[1], "usage: go run ./cmd/lab ") && strings.Contains(lines[1], tt.usage)
		for _, l := range lines {
			ok = ok && utf8.RuneCountInString(l) <= report.Width
		}
		if !ok {
			t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d, nothing on stdout, and two lines of at most %d "+
				"columns: the error saying %q, the usage line with %q", tt.args, status, stdout.String(), stderr.String(),
				exitUsage, report.Width, tt.says, tt.usage)
		}
	}
}

// TestHelpEverywhere: -h, -help, --help and help SUBCOMMAND are help,
// with exit status 0, for the command and every subcommand, wherever the
// flag stands.
func TestHelpEverywhere(t *testing.T) {
	cases := [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}, {"-h", "web"}}
	for _, c := range commands[1:] {
		cases = append(cases, []string{c.name, "-h"}, []string{c.name, "--help"}, []string{"help", c.name})
	}
	cases = append(cases, []string{"explain", "correct", "-h"}, []string{"step", "checkthenact", "Race", "-h"},
		[]string{"-backend=pg", "row", "-h"})
	for _, args := range cases {
		var stdout, stderr bytes.Buffer
		status := run(args, &stdout, &stderr)
		out := stdout.String()
		if status != exitOK || stderr.Len() != 0 || !strings.HasPrefix(out, "usage:") && !strings.HasPrefix(out, "lab renders") {
			t.Errorf("run(%q) = %d, stdout %.80q, stderr %q; want %d and the help on stdout", args, status, out, stderr.String(), exitOK)
		}
		if line, n := report.WidestLine(out); n > report.Width {
			t.Errorf("run(%q) help has a line of %d columns, want at most %d: %q", args, n, report.Width, line)
		}
	}
	var stdout bytes.Buffer
	run([]string{"web", "-h"}, &stdout, &bytes.Buffer{})
	if got := stdout.String(); !strings.HasPrefix(got, "usage: go run ./cmd/lab web [-addr 127.0.0.1:8090] [-bench FILE.json]\n") ||
		strings.Contains(got, "permutations") {
		t.Errorf("run(web -h) = %q, want web's usage and what it does, not every subcommand", got)
	}
	stdout.Reset()
	run([]string{"-h"}, &stdout, &bytes.Buffer{})
	for _, c := range commands[1:] {
		if !strings.Contains(stdout.String(), "go run ./cmd/lab "+c.synopsis+"\n") {
			t.Errorf("run(-h) does not show how %s is called: %q", c.name, c.synopsis)
		}
	}
	for _, want := range []string{"SCENARIO: Duplicate (Dup), PayloadConflict (Conf), ", "VARIANT: correct, equivalent/plainbegin, "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run(-h) does not list the names: want %q in\n%s", want, stdout.String())
		}
	}
}

// TestFlagAfterArgument: a flag is read wherever it stands, before or
// after the subcommand and its arguments, so that it is honoured; after --
// it is an argument.
func TestFlagAfterArgument(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want options
	}{
		{[]string{"permutations", "checkthenact", "-all"}, options{args: []string{"permutations", "checkthenact"}, all: true}},
		{[]string{"permutations", "-all", "checkthenact"}, options{args: []string{"permutations", "checkthenact"}, all: true}},
		{[]string{"-all", "permutations", "checkthenact"}, options{args: []string{"permutations", "checkthenact"}, all: true}},
		{[]string{"row", "markfirst", "-backend=pg-rc"}, options{args: []string{"row", "markfirst"}, backend: "pg-rc"}},
		{[]string{"row", "markfirst", "-backend", "pg-rc"}, options{args: []string{"row", "markfirst"}, backend: "pg-rc"}},
		{[]string{"explain", "correct", "-backend=pg", "Race"}, options{args: []string{"explain", "correct", "Race"}, backend: "pg"}},
		{[]string{"web", "-addr", "127.0.0.1:0"}, options{args: []string{"web"}, addr: "127.0.0.1:0"}},
		{[]string{"tour", "3", "-answer"}, options{args: []string{"tour", "3"}, answer: true}},
		{[]string{"-evidence"}, options{evidence: true}},
		{[]string{"tour", "--", "-answer"}, options{args: []string{"tour", "-answer"}}},
	} {
		got, err := parseArgs(tt.args)
		want := tt.want
		if want.backend == "" {
			want.backend = "sqlite"
		}
		if want.addr == "" {
			want.addr = webAddr
		}
		if err != nil || !slices.Equal(got.args, want.args) || got.backend != want.backend || got.addr != want.addr ||
			got.all != want.all || got.answer != want.answer || got.evidence != want.evidence || got.json != want.json {
			t.Errorf("parseArgs(%q) = %+v, %v, want %+v", tt.args, *got, err, want)
		}
	}
	// Honoured end to end: -backend=pg after the arguments asks for the
	// server, as it does before them, and runs no SQLite test instead.
	t.Setenv(report.EnvPostgres, "")
	for _, args := range [][]string{{"row", "markfirst", "-backend=pg"}, {"-backend=pg", "row", "markfirst"}} {
		var stdout, stderr bytes.Buffer
		if status := run(args, &stdout, &stderr); status != exitFail || !strings.Contains(stderr.String(), "set IDEMLAB_PG first") {
			t.Errorf("run(%q) without a server = %d, stderr %q; want %d asking for %s", args, status, stderr.String(), exitFail, report.EnvPostgres)
		}
	}
}

// goldenReport is the SQLite matrix as its golden file records it.
func goldenReport(t *testing.T, path string) *report.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.ParseReport(string(data))
	if err != nil {
		t.Fatalf("ParseReport(%s) error = %v", path, err)
	}
	return rep
}

// matrixRows are the rows of a rendered matrix's table: its lines from the
// first that starts with a name to the empty line after the table.
func matrixRows(text string) []string {
	var rows []string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "" && len(rows) > 0:
			return rows
		case line != "" && !strings.HasPrefix(line, " "):
			rows = append(rows, line)
		}
	}
	return rows
}

// TestTerminalHeading holds the matrix the command prints, on every
// backend's golden file, to a heading that needs no decoding: each
// column's short name read down the column, a letter a line, over the
// column's marks; to the golden rows and legend; to report.Width; and to a
// legend that never breaks a line inside a claim list. The golden file's
// staggered heading and its broken "(C2,\n C6)" are kept as the cases the
// checks must reject.
func TestTerminalHeading(t *testing.T) {
	for _, b := range backends {
		rep := goldenReport(t, b.golden)
		reps := []*report.Report{rep}
		if b.level != "" {
			rep.Backend = b.name
		}
		if line, n := report.WidestLine(renderMatrices(reps, true, "")); n > report.Width {
			t.Errorf("%s: the matrix has a line of %d columns, want at most %d: %q", b.name, n, report.Width, line)
		}
		out := rep.Terminal()
		if err := headingProblem(rep, out); err != nil {
			t.Errorf("%s: %v\n%s", b.name, err, out)
		}
		if rows, golden := matrixRows(out), matrixRows(rep.Matrix()); !slices.Equal(rows, golden) {
			t.Errorf("%s: the terminal's rows differ from the golden file's:\n%s", b.name, out)
		}
		if err := claimsProblem(rep, out); err != nil {
			t.Errorf("%s: %v", b.name, err)
		}
		if got, want := unwrapped(legendOf(out)), unwrapped(legendOf(rep.Matrix())); got != want {
			t.Errorf("%s: the terminal's legend says other words than the golden file's:\n%s\nwant\n%s", b.name, got, want)
		}
	}
	rep := goldenReport(t, backends[0].golden)
	if headingProblem(rep, rep.Matrix()) == nil {
		t.Errorf("headingProblem(the golden file's staggered heading) = nil, want the check to reject it")
	}
	if claimsProblem(rep, rep.Matrix()) == nil {
		t.Errorf("claimsProblem(the golden file's legend) = nil, want it to find (C2,\\n C6)")
	}
}

// headingProblem says what is wrong with the heading of out, a rendered
// matrix of rep, if anything: it must be as many lines as the longest
// short name has letters, and column i, read down, must spell scenario i's
// short name, over column i's marks.
func headingProblem(rep *report.Report, out string) error {
	lines := strings.Split(out, "\n")
	longest := 0
	for _, s := range rep.Scenarios {
		longest = max(longest, utf8.RuneCountInString(s.Short))
	}
	var heading []string
	for _, l := range lines {
		if !strings.HasPrefix(l, " ") {
			break
		}
		heading = append(heading, l)
	}
	if len(heading) != longest {
		return errors.New("the heading is " + report.Count(len(heading), "line", "lines") + ", want one a letter of the longest name")
	}
	col := len("variant") + 1 // the first mark's column: after the widest name and a space
	for _, v := range rep.Variants {
		col = max(col, len(v.Name)+1)
	}
	for i, s := range rep.Scenarios {
		var down []rune
		for _, l := range heading {
			if r := []rune(l); col+2*i < len(r) && r[col+2*i] != ' ' {
				down = append(down, r[col+2*i])
			}
		}
		if string(down) != s.Short {
			return errors.New("column " + s.Name + " reads " + string(down) + " down, want " + s.Short)
		}
	}
	return nil
}

// claimsProblem returns an error if a scenario's claim list, "(C2, C6)",
// is not whole on one line of out's legend.
func claimsProblem(rep *report.Report, out string) error {
	for _, s := range rep.Scenarios {
		if !regexp.MustCompile(`(?m)^.*` + regexp.QuoteMeta("("+s.Claims+")") + `$`).MatchString(out) {
			return errors.New("the legend breaks " + s.Name + "'s claims (" + s.Claims + ") over two lines")
		}
	}
	return nil
}

// legendOf is what follows the table of a rendered matrix.
func legendOf(out string) string {
	_, legend, _ := strings.Cut(out, "\n\n")
	return legend
}

// unwrapped is text with its lines joined and its runs of spaces one.
func unwrapped(text string) string { return strings.Join(strings.Fields(text), " ") }

// TestPageNames: the page's URLs take names as the command does, through
// the same lookup: /cell?v=checkthenact&s=race is naive/checkthenact ×
// Race, and an unknown name answers 404 with the same line.
func TestPageNames(t *testing.T) {
	rep := goldenReport(t, backends[0].golden)
	st, err := workshop.ReadStepper(filepath.Join("..", "..", "workshop", "testdata", "race.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := workshop.Handler(&workshop.Data{Tabs: workshop.Finished(rep), Stepper: st, Diffs: map[string]string{"naive/checkthenact": ""}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url  string
		code int
		says string
	}{
		{"/cell?v=checkthenact&s=race", http.StatusOK, "naive/checkthenact"},
		{"/cell?v=checkthenact&s=CRace", http.StatusOK, "ConflictRace"},
		{"/cell?v=CheckThenAct&s=cncl", http.StatusOK, "Cancel"},
		{"/cell?v=naive/checkthenact&s=Biz*", http.StatusOK, "BusinessKey"},
		{"/cell?v=correct&s=Summary", http.StatusOK, "Summary"},
		{"/step?v=checkthenact&s=race", http.StatusOK, "naive/checkthenact"},
		{"/tree?v=correct&s=race", http.StatusOK, `"variant":"correct"`},
		{"/diff?v=checkthenact", http.StatusOK, "naive/checkthenact"},
		{"/cell?v=checkthenact&s=Racee", http.StatusNotFound, `unknown scenario "Racee"; did you mean Race?`},
		{"/cell?v=insert*&s=race", http.StatusNotFound, `ambiguous variant "insert*": `},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tt.url, nil))
		if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.says) {
			t.Errorf("GET %s = %d %.200q, want %d and %q", tt.url, w.Code, w.Body.String(), tt.code, tt.says)
		}
	}
}

// TestPermutationsAll: three schedules an outcome by default, with a line
// that says how many more and how to see them; with -all every one.
func TestPermutationsAll(t *testing.T) {
	rep := testReport()
	var perms []report.Permutation
	for _, sched := range []string{"A1 B1", "B1 A1", "A1 A2 B1", "B1 B2 A1", "A1 B1 B2"} {
		perms = append(perms, report.Permutation{Schedule: sched, Outcome: "A applied, B duplicate; balance 500"})
	}
	rep.Variants[1].Results["Race"].Permutations = perms
	some, err := renderPermutations(rep, "naive/checkthenact", false)
	if err != nil {
		t.Fatal(err)
	}
	all, err := renderPermutations(rep, "naive/checkthenact", true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(some, "A1 B1 B2\n") || !strings.Contains(some, "… and 2 interleavings more (-all lists them)") {
		t.Errorf("renderPermutations(5 of one outcome, not all) = %q, want 3 schedules and 2 more, and -all", some)
	}
	for _, p := range perms {
		if !strings.Contains(all, "    "+p.Schedule+"\n") {
			t.Errorf("renderPermutations(all) = %q, want schedule %s", all, p.Schedule)
		}
	}
	if strings.Contains(all, "more") {
		t.Errorf("renderPermutations(all) = %q, want no \"more\"", all)
	}
}

// TestColumnExplainKeepClaims: column and explain, like the legend, never
// break a line inside a scenario's claim list.
func TestColumnExplainKeepClaims(t *testing.T) {
	rep := goldenReport(t, backends[0].golden)
	for _, s := range rep.Scenarios {
		column, err := renderColumn(rep, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		explain, err := renderExplain(rep, "correct", s.Name)
		if err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"renderColumn": column, "renderExplain": explain} {
			if !regexp.MustCompile(`(?m)` + regexp.QuoteMeta("("+s.Claims+")") + `$`).MatchString(out) {
				t.Errorf("%s(%s) breaks the claims (%s) over two lines:\n%s", name, s.Name, s.Claims, out)
			}
		}
	}
	s := report.ScenarioInfo{Name: "Race", Claims: "C3, C4, C10, C14, C32",
		Shows: "two deliveries at once, every interleaving: exactly one credit, one duplicate"}
	if out := report.Wrap("Race: "+s.Shows+" ("+s.Claims+")", 4); !strings.Contains(out, "(C3, C4, C10,\n") {
		t.Errorf("report.Wrap(Race's line) = %q, want it to break the claims: the case the check rejects", out)
	}
	if out := report.WrapClaims("Race: "+s.Shows+" ("+s.Claims+")", 4); !strings.HasSuffix(out, "\n    (C3, C4, C10, C14, C32)\n") {
		t.Errorf("report.WrapClaims(Race's line) = %q, want the claims whole on the next line", out)
	}
}
