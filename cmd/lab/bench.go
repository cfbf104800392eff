package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// benchLine matches one result of BenchmarkProcess (correct/bench_test.go):
// its durability, load and deliverers, and the events/s it reported.
var benchLine = regexp.MustCompile(`^BenchmarkProcess/([\w-]+)/(\w+)/deliverers=(\d+)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) events/s`)

// benchKey names one measurement.
type benchKey struct {
	durability, load string
	deliverers       int
}

// parseBench reads go test -bench's output into events/s per measurement,
// keeping the durabilities and deliverer counts in the order they came.
func parseBench(out []byte) (rates map[benchKey]float64, durabilities []string, deliverers []int) {
	rates = map[benchKey]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		rate, _ := strconv.ParseFloat(m[4], 64)
		rates[benchKey{m[1], m[2], n}] = rate
		if !slices.Contains(durabilities, m[1]) {
			durabilities = append(durabilities, m[1])
		}
		if !slices.Contains(deliverers, n) {
			deliverers = append(deliverers, n)
		}
	}
	return rates, durabilities, deliverers
}

// renderBench prints the cost of idempotency as ratios to the bare
// baseline measured in the same run: distinct events (the inbox row and
// the key check added to every credit) and repeats (a duplicate answered
// from the inbox, with nothing to write).
func renderBench(rates map[benchKey]float64, durabilities []string, deliverers []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %10s %14s %16s %14s\n", "durability", "deliverers", "bare events/s", "distinct × bare", "repeat × bare")
	for _, d := range durabilities {
		for _, n := range deliverers {
			base := rates[benchKey{d, "bare", n}]
			ratio := func(load string) string {
				r, ok := rates[benchKey{d, load, n}]
				if !ok || base == 0 {
					return "-"
				}
				return fmt.Sprintf("%.2f", r/base)
			}
			fmt.Fprintf(&b, "%-12s %10d %14.0f %16s %14s\n", d, n, base, ratio("distinct"), ratio("repeat"))
		}
	}
	b.WriteString("\nbare: the same credit and a row, in one transaction, without the inbox key.\n" +
		"each ratio compares two measurements of this run; compare runs with benchstat:\n" +
		"  go test ./correct -run '^$' -bench BenchmarkProcess -count 6 > new.txt\n" +
		"  go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da old.txt new.txt\n")
	return b.String()
}

// cmdBench runs BenchmarkProcess and prints its figures as ratios.
func cmdBench(stdout, stderr io.Writer) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	args := []string{"test", "./correct", "-run", "^$", "-bench", "BenchmarkProcess", "-benchtime", "1s"}
	fmt.Fprintf(stderr, "running (about a minute): go %s\n", strings.Join(args, " "))
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		stderr.Write(out)
		return fmt.Errorf("the benchmarks failed: %v", err)
	}
	rates, durabilities, deliverers := parseBench(out)
	if len(rates) == 0 {
		stderr.Write(out)
		return fmt.Errorf("the benchmarks reported no events/s")
	}
	_, err = io.WriteString(stdout, renderBench(rates, durabilities, deliverers))
	return err
}
