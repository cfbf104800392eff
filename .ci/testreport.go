//go:build ignore

// Testreport reads the events of go test -json on standard input and says
// what a CI log must say: every failed test's output in full, each test's
// lines together even when tests ran in parallel, then what the packages
// that failed printed outside any test (a panic, a timeout, a build
// error). go test -v's log interleaves parallel tests, and its tail cuts a
// long failure (a MariaDB cell's transcript) short.
//
// With -need "TestA TestB", each of those tests must have passed, not been
// skipped or left unrun; the line go test printed for each that did is
// shown. It exits 1 when a test or package failed or a needed test did not
// pass, 0 otherwise.
//
//	go test ./scenarios -json | go run .ci/testreport.go -need TestMariaDB
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// event is one line of go test -json (go doc test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // a build event's package
	Test       string
	Output     string
}

// key names a test within its package; Test is "" for the package itself.
type key struct{ pkg, test string }

func main() {
	need := flag.String("need", "", "space-separated names of top-level tests that must pass")
	flag.Parse()

	output := map[key][]string{} // each test's lines, in order
	result := map[key]string{}   // pass, fail or skip
	var order []key              // the tests that failed, as they ended
	var notJSON []string         // lines that are no event, shown with a failure
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		var e event
		if err := json.Unmarshal(in.Bytes(), &e); err != nil || e.Action == "" {
			notJSON = append(notJSON, in.Text())
			continue
		}
		if e.Package == "" {
			e.Package = e.ImportPath
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output", "build-output":
			output[k] = append(output[k], e.Output)
		case "pass", "fail", "skip":
			result[k] = e.Action
			if e.Action == "fail" && e.Test != "" {
				order = append(order, k)
			}
		case "build-fail":
			result[key{e.Package, ""}] = "fail"
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: reading go test -json: %v\n", err)
		os.Exit(1)
	}

	failed := false
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, k := range order {
		failed = true
		fmt.Fprintf(out, "==== %s %s\n", k.pkg, k.test)
		for _, line := range output[k] {
			if !strings.HasPrefix(line, "=== ") { // RUN, PAUSE, CONT, NAME: where it was, not what it said
				out.WriteString(line)
			}
		}
	}
	var pkgs []string
	for k, r := range result {
		if k.test == "" && r == "fail" {
			pkgs = append(pkgs, k.pkg)
		}
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		failed = true
		fmt.Fprintf(out, "==== %s, outside its tests\n", p)
		for _, line := range output[key{p, ""}] {
			out.WriteString(line)
		}
	}
	if failed {
		for _, line := range notJSON {
			fmt.Fprintln(out, line)
		}
	}

	for _, name := range strings.Fields(*need) {
		var pkg, r string
		for k, v := range result {
			if k.test == name {
				pkg, r = k.pkg, v
				break
			}
		}
		switch r {
		case "pass":
			for _, line := range output[key{pkg, name}] {
				if strings.HasPrefix(line, "--- PASS: "+name+" ") {
					out.WriteString(line)
				}
			}
		case "fail":
			// Its output is above.
		case "skip":
			failed = true
			fmt.Fprintf(out, "%s was skipped:\n", name)
			for _, line := range output[key{pkg, name}] {
				out.WriteString(line)
			}
		default:
			failed = true
			fmt.Fprintf(out, "%s did not run\n", name)
		}
	}
	if failed {
		out.Flush()
		os.Exit(1)
	}
}
