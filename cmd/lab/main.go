// Command lab renders what the scenario tests report.
//
// It does not run any scenario itself: every subcommand starts
// go test ./scenarios -run ... -lab.report=FILE in the module root, reads the
// report the tests wrote (lab.ReadReport) and prints it. The verdicts, the
// evidence and the transcripts it shows are the tests' own, so there is one
// source of truth and no second runner that could disagree with it.
//
// Usage:
//
//	go run ./cmd/lab                            the verdict matrix and its legend
//	go run ./cmd/lab -evidence                  the same, with a line of evidence for every ✗ and ○
//	go run ./cmd/lab -json                      the whole report, for programs
//	go run ./cmd/lab row VARIANT                one variant: every verdict with its evidence
//	go run ./cmd/lab column SCENARIO            one scenario: every variant's verdict and evidence
//	go run ./cmd/lab explain VARIANT SCENARIO   one cell: its verdict, broken guarantees and transcript
//	go run ./cmd/lab permutations VARIANT       the interleavings of two deliveries, grouped by outcome
//	go run ./cmd/lab diff VARIANT               a naive variant's code against correct/
//	go run ./cmd/lab bench                      what idempotency costs, as ratios to the bare work
//	go run ./cmd/lab web [-addr HOST:PORT]      the workshop page: matrix, swimlanes, stepper
//	go run ./cmd/lab step VARIANT SCENARIO      play a race (Race, ConflictRace) in the terminal
//
// -backend chooses the matrices that the matrix, row, column, explain and
// permutations run: sqlite (the default, which needs no server), pg for
// PostgreSQL at READ COMMITTED, REPEATABLE READ and SERIALIZABLE, or one
// level, pg-rc, pg-rr or pg-ser. PostgreSQL needs IDEMLAB_PG, e.g.
//
//	IDEMLAB_PG='postgres:///postgres?host=/var/run/postgresql' go run ./cmd/lab -backend=pg
//
// VARIANT is correct, equivalent/<name> or naive/<mistake> (the prefix may be
// left out), or exercises/<name> for explain and permutations.
// The exit status is 0 on success, 1 when the scenario tests could not run or
// failed, and 2 on a usage error (unknown subcommand, variant or scenario).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // the tests could not run, or failed
	exitUsage = 2 // bad arguments
)

// usageText is printed for -h, help and usage errors.
const usageText = `lab renders what the scenario tests (go test ./scenarios) report.

usage:
  go run ./cmd/lab [-backend=B] [-evidence | -json]
  go run ./cmd/lab [-backend=B] row VARIANT
  go run ./cmd/lab [-backend=B] column SCENARIO
  go run ./cmd/lab [-backend=B] explain VARIANT SCENARIO
  go run ./cmd/lab [-backend=B] permutations VARIANT
  go run ./cmd/lab diff VARIANT
  go run ./cmd/lab bench
  go run ./cmd/lab web [-addr 127.0.0.1:8090]
  go run ./cmd/lab step VARIANT SCENARIO
  go run ./cmd/lab help

subcommands:
  (none)     run every scenario against every variant; print the verdict
             matrix and its legend
  -evidence  the same, with a numbered line of evidence for every ✗, and of
             why for every ○ (a cell that could not judge its variant)
  -json      the same run, the whole report as JSON for programs: scenarios,
             mistakes, verdicts, evidence, transcripts, interleavings
  row        run one variant's row; print every verdict with its evidence
  column     run one scenario's column; print every verdict with its evidence
  explain    run one cell; print its verdict, what the scenario shows, the
             variant's mistake, the broken guarantees and the transcript
  permutations
             run one variant's row; list the interleavings of two
             concurrent deliveries (Race, ConflictRace) grouped by outcome,
             with the steps that waited for the lock, and how many of them
             break the guarantee
  diff       show a naive variant's code against correct/ (git diff --no-index)
  bench      measure what idempotency costs: correct's events/s as ratios to
             the same work without the inbox, in three durability settings,
             for 1, 8 and 64 deliverers, distinct events and repeats; with
             IDEMLAB_PG set, also on PostgreSQL at each isolation level, with
             its retries and busy answers per 1,000 events
  web        serve the workshop page on localhost at once: the matrix as
             tabs (SQLite; PostgreSQL's three levels, live with IDEMLAB_PG,
             else their golden files' verdicts, labelled recorded), filled
             in as the tests run; each cell's transcript as swimlanes,
             diffs, claims, and a race stepper
  step       play a race (Race or ConflictRace) in the terminal: choose
             which delivery takes its next statement, until it ends
  help       print this text

-backend=B chooses the matrices the first five run:
  sqlite     SQLite (the default; no server needed)
  pg         PostgreSQL at READ COMMITTED, REPEATABLE READ and SERIALIZABLE
  pg-rc      PostgreSQL at READ COMMITTED only; pg-rr, pg-ser likewise
PostgreSQL needs a server, named by IDEMLAB_PG, e.g.
  export IDEMLAB_PG='postgres:///postgres?host=/var/run/postgresql'
With several matrices -json prints an array of reports, one per backend.

VARIANT is correct, equivalent/<name> or naive/<mistake> (the prefix may be
left out), or exercises/<name> for explain and permutations.
SCENARIO is a column of the matrix, e.g. Race or Duplicate.

examples:
  go run ./cmd/lab
  go run ./cmd/lab -evidence
  go run ./cmd/lab row markfirst
  go run ./cmd/lab column Race
  go run ./cmd/lab explain correct Race
  go run ./cmd/lab explain checkthenact Race
  go run ./cmd/lab permutations checkthenact
  go run ./cmd/lab diff naive/checkthenact
  go run ./cmd/lab -backend=pg
  go run ./cmd/lab -backend=pg-rc explain checkthenacttx Race
  go run ./cmd/lab web
  go run ./cmd/lab step checkthenact Race
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is an error in the command line: it exits with status 2. If
// showUsage is set, the usage text follows the message; a message that
// already lists the valid names (an unknown variant or scenario) stands alone.
type usageError struct {
	msg       string
	showUsage bool
}

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError, followed by the usage text, for a command
// line of the wrong shape.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), showUsage: true}
}

// badArgf returns a usageError for an unknown name; its message says which
// names are valid.
func badArgf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// run parses args, runs the subcommand they name and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print the whole report as JSON")
	evidence := fs.Bool("evidence", false, "print a line of evidence for every ✗, and why for every ○")
	backendArg := fs.String("backend", "sqlite", "the matrices to run: "+backendFlagHelp)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageText)
			return exitOK
		}
		return exitStatus(stderr, usagef("%v", err))
	}
	rest := fs.Args()
	bs, err := parseBackend(*backendArg)
	if err != nil {
		return exitStatus(stderr, err)
	}
	if len(rest) == 0 {
		return exitStatus(stderr, cmdMatrix(stdout, stderr, bs, args, *asJSON, *evidence))
	}
	if sub := rest[0]; onPostgres(bs) && !slices.Contains([]string{"row", "column", "explain", "permutations"}, sub) {
		return exitStatus(stderr, usagef("-backend applies to the matrix, row, column, explain and permutations, not to %s "+
			"(web shows every backend as a tab)", sub))
	}
	if *asJSON || *evidence {
		return exitStatus(stderr, usagef("-json and -evidence apply only to the matrix (go run ./cmd/lab -evidence)"))
	}
	switch sub, subArgs := rest[0], rest[1:]; sub {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	case "explain":
		if len(subArgs) != 2 {
			return exitStatus(stderr, usagef("explain takes a variant and a scenario: go run ./cmd/lab explain VARIANT SCENARIO"))
		}
		return exitStatus(stderr, cmdExplain(stdout, stderr, bs, args, subArgs[0], subArgs[1]))
	case "row":
		if len(subArgs) != 1 {
			return exitStatus(stderr, usagef("row takes one variant: go run ./cmd/lab row VARIANT"))
		}
		return exitStatus(stderr, cmdRow(stdout, stderr, bs, args, subArgs[0]))
	case "column":
		if len(subArgs) != 1 {
			return exitStatus(stderr, usagef("column takes one scenario: go run ./cmd/lab column SCENARIO"))
		}
		return exitStatus(stderr, cmdColumn(stdout, stderr, bs, args, subArgs[0]))
	case "permutations":
		if len(subArgs) != 1 {
			return exitStatus(stderr, usagef("permutations takes one variant: go run ./cmd/lab permutations VARIANT"))
		}
		return exitStatus(stderr, cmdPermutations(stdout, stderr, bs, args, subArgs[0]))
	case "bench":
		if len(subArgs) != 0 {
			return exitStatus(stderr, usagef("bench takes no arguments: go run ./cmd/lab bench"))
		}
		return exitStatus(stderr, cmdBench(stdout, stderr))
	case "diff":
		if len(subArgs) != 1 {
			return exitStatus(stderr, usagef("diff takes one variant: go run ./cmd/lab diff VARIANT"))
		}
		return exitStatus(stderr, cmdDiff(stdout, stderr, subArgs[0]))
	case "web":
		return exitStatus(stderr, cmdWeb(stdout, stderr, subArgs))
	case "step":
		if len(subArgs) != 2 {
			return exitStatus(stderr, usagef("step takes a variant and a race: go run ./cmd/lab step naive/checkthenact Race"))
		}
		return exitStatus(stderr, cmdStep(os.Stdin, stdout, stderr, subArgs[0], subArgs[1]))
	default:
		return exitStatus(stderr, usagef("unknown subcommand %q", sub))
	}
}

// exitStatus prints err, if any, and returns the exit status it calls for. A
// usage error is followed by the usage text.
func exitStatus(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "lab: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.showUsage {
			fmt.Fprintf(stderr, "\n%s", usageText)
		}
		return exitUsage
	}
	return exitFail
}
