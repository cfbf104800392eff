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
//	go run ./cmd/lab permutations [-all] VARIANT  the interleavings of two deliveries, by outcome
//	go run ./cmd/lab diff VARIANT               a naive variant's code against correct/
//	go run ./cmd/lab bench [-count N] [-out F]  what idempotency costs, as ratios to the bare work
//	go run ./cmd/lab web [-addr HOST:PORT]      the workshop page: matrix, swimlanes, stepper
//	go run ./cmd/lab step VARIANT [RACE]        play a race (Race, the default, or ConflictRace)
//	go run ./cmd/lab tour [N] [-answer]         a guided tour in seven steps, questions for the room
//
// -backend chooses the matrices that the matrix, row, column, explain and
// permutations run: sqlite (the default, which needs no server), pg for
// PostgreSQL at READ COMMITTED, REPEATABLE READ and SERIALIZABLE, or one
// level, pg-rc, pg-rr or pg-ser; mariadb for MariaDB at READ COMMITTED,
// REPEATABLE READ (as the server's default has it, and with
// innodb_snapshot_isolation) and SERIALIZABLE, or one level, mariadb-rc,
// mariadb-rr, mariadb-rr-si or mariadb-ser. PostgreSQL needs IDEMLAB_PG,
// MariaDB IDEMLAB_MARIADB, e.g.
//
//	IDEMLAB_PG='postgres:///postgres?host=/var/run/postgresql' go run ./cmd/lab -backend=pg
//	eval "$(.ci/mariadb-start)"; go run ./cmd/lab -backend=mariadb
//
// Names are taken as the matrix shows them, in any case (report.Lookup): a
// scenario by its name or its column's heading (ConflictRace, CRace,
// crace), a variant with or without naive/ or equivalent/, and a start or
// a glob that fits one name only (Rollb, Biz*); exercises/<name> for explain
// and permutations. A flag may come before or after the subcommand and its
// arguments; one that the subcommand does not take is refused.
// The exit status is 0 on success (and for -h), 1 when the scenario tests
// could not run or failed, and 2 on a usage error (unknown subcommand,
// variant or scenario), told in one line and followed by one usage line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"idemlab/lab/report"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // the tests could not run, or failed
	exitUsage = 2 // bad arguments
)

// command is a subcommand: its name, how it is called, how many
// arguments it takes, which flags beyond the common ones, and what it does.
type command struct {
	name     string
	synopsis string // after go run ./cmd/lab
	min, max int    // its arguments
	flags    []string
	backend  bool   // -backend applies to it
	about    string // for -h
}

// commands are the subcommands, in the order help lists them. The first,
// with no name, is the matrix.
var commands = []*command{
	{name: "", synopsis: "[-backend=B] [-evidence | -json]", backend: true, flags: []string{"evidence", "json"},
		about: "run every scenario against every variant; print the verdict matrix and its legend. " +
			"-evidence adds a numbered line of evidence for every ✗, and of why for every ○ (a cell " +
			"that could not judge its variant); -json prints the whole report for programs: " +
			"scenarios, mistakes, verdicts, evidence, transcripts, interleavings"},
	{name: "row", synopsis: "[-backend=B] row VARIANT", min: 1, max: 1, backend: true,
		about: "run one variant's row; print every verdict with its evidence"},
	{name: "column", synopsis: "[-backend=B] column SCENARIO", min: 1, max: 1, backend: true,
		about: "run one scenario's column; print every verdict with its evidence"},
	{name: "explain", synopsis: "[-backend=B] explain VARIANT SCENARIO", min: 2, max: 2, backend: true,
		about: "run one cell; print its verdict, what the scenario shows, the variant's mistake, " +
			"the transcript and the broken guarantees in it"},
	{name: "permutations", synopsis: "[-backend=B] permutations [-all] VARIANT", min: 1, max: 1, backend: true,
		flags: []string{"all"},
		about: "run one variant's row; list the interleavings of two concurrent deliveries " +
			"(Race, ConflictRace) grouped by outcome, with the steps that waited for the lock, " +
			"and how many break the guarantee; three schedules an outcome, or with -all every one"},
	{name: "diff", synopsis: "diff VARIANT", min: 1, max: 1,
		about: "show a naive variant's code against correct/ (git diff --no-index)"},
	{name: "bench", synopsis: "bench [-count N] [-out FILE.json] [-svg FILE.svg]", flags: []string{"count", "out", "svg"},
		about: "measure what idempotency costs: correct's events/s as ratios to the same work " +
			"without the inbox, in three durability settings, for 1, 8 and 64 deliverers, distinct " +
			"events and repeats; with IDEMLAB_PG set, also on PostgreSQL at each isolation level, " +
			"with its retries and busy answers per 1,000 events. The benchmarks run -count times " +
			"(default 4), one after another, so that each ratio is paired within a run: it prints " +
			"each ratio's median with its min–max over the runs; -out writes the same as JSON " +
			"(with the rates, when, and the load average), -svg draws it as the chart the web " +
			"page's Cost tab shows"},
	{name: "web", synopsis: "web [-addr " + webAddr + "] [-bench FILE.json]", flags: []string{"addr", "bench"},
		about: "serve the workshop page on localhost at once: the matrix as tabs (SQLite; " +
			"PostgreSQL's three levels and MariaDB's four, live with IDEMLAB_PG and IDEMLAB_MARIADB, " +
			"else their golden files' verdicts, labelled recorded), filled in as the tests run; each cell's transcript as swimlanes, " +
			"diffs, claims, a race stepper, and what the inbox costs as a chart (of bench -out's " +
			"FILE.json; docs/bench.json, a recorded run, unless -bench names one)"},
	{name: "step", synopsis: "step VARIANT [Race | ConflictRace]", min: 1, max: 2,
		about: "play a race in the terminal, Race unless ConflictRace is named: choose which " +
			"delivery takes its next statement, until it ends"},
	{name: "tour", synopsis: "tour [N] [-answer]", max: 1, flags: []string{"answer"},
		about: "a guided tour in the article's order, from the seed's 20 deliveries to the " +
			"limits: each step one thing to run or click, what to look at and a question for the " +
			"room. tour N shows one step; its answer comes with -answer, or after Enter on a terminal"},
	{name: "help", synopsis: "help [SUBCOMMAND]", max: 1,
		about: "print this text, or one subcommand's part of it (as -h does)"},
}

// lookupCommand returns the subcommand named name, spelled out.
func lookupCommand(name string) (*command, error) {
	var names []report.Name
	for _, c := range commands[1:] {
		if c.name == strings.ToLower(name) {
			return c, nil
		}
		names = append(names, report.Name{Full: c.name})
	}
	// The kit's lookup says which subcommand is close; a subcommand is
	// never run on a guess, though: they can take minutes.
	i, err := report.Lookup("subcommand", name, names)
	if err == nil {
		return nil, usagef("unknown subcommand %q; did you mean %s?", name, names[i].Full)
	}
	return nil, err
}

// usageLine is the line that follows every usage error: how c is called,
// and that -h (go run ./cmd/lab explain -h) says more.
func (c *command) usageLine() string {
	return fmt.Sprintf("usage: go run ./cmd/lab %s   (-h for more)", c.synopsis)
}

// topUsage is the usage line of a command line whose subcommand is not
// known.
const topUsage = "usage: go run ./cmd/lab [-backend=B] [SUBCOMMAND ARGS]   (-h lists the subcommands and the names)"

// help is the text of -h for c, or for everything when c is nil.
func help(c *command) string {
	if c != nil && c.name != "" && c.name != "help" {
		names := namesHelp(c)
		if names != "" {
			names += "\n"
		}
		return "usage: go run ./cmd/lab " + c.synopsis + "\n\n" + report.Wrap(c.about, 0) +
			"\n" + names + "everything: go run ./cmd/lab -h\n"
	}
	var b strings.Builder
	b.WriteString("lab renders what the scenario tests (go test ./scenarios) report.\n\nusage:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  go run ./cmd/lab %s\n", c.synopsis)
	}
	b.WriteString("\nsubcommands:\n")
	for _, c := range commands {
		name := c.name
		if name == "" {
			name = "(none)"
		}
		if len(name) > 10 {
			fmt.Fprintf(&b, "  %s\n%s", name, report.Wrap(strings.Repeat(" ", 13)+c.about, 13))
			continue
		}
		b.WriteString(report.Wrap(fmt.Sprintf("  %-10s %s", name, c.about), 13))
	}
	b.WriteString(backendHelp + "\n" + namesHelp(nil) + examples)
	return b.String()
}

// backendHelp says what -backend chooses.
const backendHelp = `
-backend=B chooses the matrices the first five run:
  sqlite     SQLite (the default; no server needed)
  pg         PostgreSQL at READ COMMITTED, REPEATABLE READ and SERIALIZABLE
  pg-rc      PostgreSQL at READ COMMITTED only; pg-rr, pg-ser likewise
  mariadb    MariaDB at READ COMMITTED, REPEATABLE READ (also with innodb_snapshot_isolation: rr-si)
             and SERIALIZABLE
  mariadb-rc MariaDB at READ COMMITTED only; mariadb-rr, mariadb-rr-si, mariadb-ser likewise
PostgreSQL needs a server, named by IDEMLAB_PG, MariaDB one named by IDEMLAB_MARIADB, e.g.
  export IDEMLAB_PG='postgres:///postgres?host=/var/run/postgresql'
  eval "$(.ci/mariadb-start)"    # starts the lab's own MariaDB and sets IDEMLAB_MARIADB
With several matrices -json prints an array of reports, one per backend.
Flags may come before or after the subcommand; one it does not take is refused.
`

// examples ends the help.
const examples = `
examples:
  go run ./cmd/lab
  go run ./cmd/lab -evidence
  go run ./cmd/lab tour
  go run ./cmd/lab row markfirst
  go run ./cmd/lab column CRace
  go run ./cmd/lab explain checkthenact race
  go run ./cmd/lab permutations checkthenact -all
  go run ./cmd/lab diff naive/checkthenact
  go run ./cmd/lab -backend=pg
  go run ./cmd/lab -backend=pg-rc explain checkthenacttx Race
  go run ./cmd/lab -backend=mariadb-rr row foundrows
  go run ./cmd/lab web
  go run ./cmd/lab step checkthenact
`

// namesHelp says how variants and scenarios are named, and lists them,
// for the help of c (every subcommand's when c is nil).
func namesHelp(c *command) string {
	var b strings.Builder
	variant, scenario := c == nil, c == nil
	if c != nil {
		variant = strings.Contains(c.synopsis, "VARIANT")
		scenario = strings.Contains(c.synopsis, "SCENARIO")
	}
	if !variant && !scenario {
		return ""
	}
	b.WriteString(report.Wrap("Names are taken as the matrix shows them, in any case: a scenario by its name or its "+
		"heading (ConflictRace, CRace, crace), a variant with or without naive/ (checkthenact); a start or a "+
		"glob that fits one name only will do (Rollb, Biz*). explain and permutations also take exercises/<name>.", 0))
	if variant {
		b.WriteString(packed("VARIANT:", registered()))
	}
	if scenario {
		if cols, err := columns(backends[:1]); err == nil {
			var names []string
			for _, s := range cols {
				if s.Short == s.Name {
					names = append(names, s.Name)
				} else {
					names = append(names, s.Name+" ("+s.Short+")")
				}
			}
			b.WriteString(packed("SCENARIO:", names))
		}
	}
	return b.String()
}

// packed lists items after head, as many a line as fit report.Width, the
// lines after the first indented by 4, never breaking an item.
func packed(head string, items []string) string {
	var b strings.Builder
	line := head
	for i, item := range items {
		if i < len(items)-1 {
			item += ","
		}
		if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(item) > report.Width {
			b.WriteString(line + "\n")
			line = "   "
		}
		line += " " + item
	}
	return b.String() + line + "\n"
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is an error in the command line: it exits with status 2, its
// one line followed by the usage line of the subcommand it was given to.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// options are the command line parsed: its arguments in order, and its
// flags wherever they stood.
type options struct {
	args              []string
	backend, addr     string
	json, evidence    bool
	all, answer, help bool
	count             int             // bench: how many runs
	out, svg          string          // bench: where to write JSON and a chart
	benchFile         string          // web: the bench results to draw
	set               map[string]bool // the flags given
}

// parseArgs reads the flags wherever they stand, before, between or after
// the subcommand and its arguments (after -- everything is an argument),
// so that a flag after an argument is honoured, not taken for one.
func parseArgs(args []string) (*options, error) {
	o := &options{set: map[string]bool{}}
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.backend, "backend", "sqlite", "the matrices to run: "+backendFlagHelp)
	fs.BoolVar(&o.json, "json", false, "print the whole report as JSON")
	fs.BoolVar(&o.evidence, "evidence", false, "print a line of evidence for every ✗, and why for every ○")
	fs.BoolVar(&o.all, "all", false, "permutations: list every interleaving")
	fs.StringVar(&o.addr, "addr", webAddr, "web: the address to serve on")
	fs.BoolVar(&o.answer, "answer", false, "tour: show the answer")
	fs.IntVar(&o.count, "count", 4, "bench: how many runs")
	fs.StringVar(&o.out, "out", "", "bench: write the results as JSON to this file")
	fs.StringVar(&o.svg, "svg", "", "bench: draw the results as an SVG chart in this file")
	fs.StringVar(&o.benchFile, "bench", "", "web: draw the cost chart from this file (bench -out's JSON)")
	var after []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, after = args[:i], args[i+1:]
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				o.help = true
				break
			}
			return o, usagef("%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		o.args = append(o.args, fs.Arg(0))
		args = fs.Args()[1:]
	}
	o.args = append(o.args, after...)
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return o, nil
}

// run parses args, runs the subcommand they name and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	c := commands[0]
	if err != nil {
		if len(o.args) > 0 {
			c, _ = lookupCommand(o.args[0])
		}
		return exitStatus(stderr, err, c)
	}
	if len(o.args) > 0 {
		if c, err = lookupCommand(o.args[0]); err != nil {
			if o.help {
				fmt.Fprint(stdout, help(nil))
				return exitOK
			}
			return exitStatus(stderr, err, nil)
		}
	}
	rest := o.args[min(1, len(o.args)):]
	if o.help || c.name == "help" {
		if c.name == "help" && len(rest) > 0 {
			if c, err = lookupCommand(rest[0]); err != nil {
				return exitStatus(stderr, err, commands[len(commands)-1])
			}
		}
		fmt.Fprint(stdout, help(c))
		return exitOK
	}
	for _, name := range []string{"json", "evidence", "all", "addr", "bench", "answer", "count", "out", "svg"} {
		if o.set[name] && !slices.Contains(c.flags, name) {
			return exitStatus(stderr, refuse(name, c), c)
		}
	}
	bs, err := parseBackend(o.backend)
	if err != nil {
		return exitStatus(stderr, err, c)
	}
	if onServer(bs) && !c.backend {
		return exitStatus(stderr, usagef("-backend applies to the matrix, row, column, explain and permutations, "+
			"not to %s", c.name), c)
	}
	if len(rest) < c.min || len(rest) > c.max {
		return exitStatus(stderr, c.wrongArgs(rest), c)
	}
	return exitStatus(stderr, c.run(o, bs, rest, stdout, stderr), c)
}

// refuse is the error for a flag c does not take.
func refuse(flag string, c *command) error {
	switch flag {
	case "json", "evidence":
		return usagef("-json and -evidence apply only to the matrix (go run ./cmd/lab -evidence), not to %s", c.name)
	case "all":
		return usagef("-all applies only to permutations (go run ./cmd/lab permutations -all VARIANT)")
	case "addr":
		return usagef("-addr applies only to web (go run ./cmd/lab web -addr %s)", webAddr)
	case "bench":
		return usagef("-bench applies only to web (go run ./cmd/lab web -bench FILE.json)")
	case "count", "out", "svg":
		return usagef("-%s applies only to bench (go run ./cmd/lab bench -%s ...)", flag, flag)
	}
	return usagef("-answer applies only to tour (go run ./cmd/lab tour N -answer)")
}

// wrongArgs says what c takes, given args.
func (c *command) wrongArgs(args []string) error {
	takes := map[string]string{
		"row": "one variant", "column": "one scenario", "explain": "a variant and a scenario",
		"permutations": "one variant", "diff": "one variant", "bench": "no arguments",
		"web": "no arguments, only -addr and -bench", "step": "a variant and, if not Race, the race",
		"tour": "at most a step's number", "help": "at most a subcommand",
	}[c.name]
	if c.name == "" {
		return usagef("unknown subcommand %q", args[0])
	}
	return usagef("%s takes %s, not %d: %s", c.name, takes, len(args), quoteArgs(args))
}

// quoteArgs lists args as they were given, for an error.
func quoteArgs(args []string) string {
	if len(args) == 0 {
		return "none given"
	}
	var q []string
	for _, a := range args {
		q = append(q, fmt.Sprintf("%q", a))
	}
	return strings.Join(q, " ")
}

// run runs c with its arguments.
func (c *command) run(o *options, bs []backend, rest []string, stdout, stderr io.Writer) error {
	switch c.name {
	case "":
		return cmdMatrix(stdout, stderr, bs, o.json, o.evidence)
	case "explain":
		return cmdExplain(stdout, stderr, bs, rest[0], rest[1])
	case "row":
		return cmdRow(stdout, stderr, bs, rest[0])
	case "column":
		return cmdColumn(stdout, stderr, bs, rest[0])
	case "permutations":
		return cmdPermutations(stdout, stderr, bs, rest[0], o.all)
	case "bench":
		return cmdBench(stdout, stderr, o.count, o.out, o.svg)
	case "diff":
		return cmdDiff(stdout, stderr, rest[0])
	case "web":
		return cmdWeb(stdout, stderr, o.addr, o.benchFile)
	case "step":
		return cmdStep(os.Stdin, stdout, stderr, rest)
	case "tour":
		// A prompt needs a reader at a terminal, and one to read it.
		interactive := isTerminal(os.Stdin) && isTerminal(os.Stdout)
		return cmdTour(os.Stdin, interactive, stdout, rest, o.answer)
	}
	return fmt.Errorf("subcommand %s has no code", c.name)
}

// exitStatus prints err, if any, and returns the exit status it calls for. A
// usage error, or a name the kit's lookup could not resolve, is one line
// followed by the usage line of c (nil: of the whole command).
func exitStatus(stderr io.Writer, err error, c *command) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "lab: %v\n", err)
	usage := topUsage
	if c != nil {
		usage = c.usageLine()
	}
	var se *serverError
	var ue *usageError
	var le *report.LookupError
	switch {
	case errors.As(err, &se):
		fmt.Fprintln(stderr, usage)
		return exitFail
	case errors.As(err, &ue) || errors.As(err, &le):
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	return exitFail
}
