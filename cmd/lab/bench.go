package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"idemlab/lab/report"
)

// benchLine matches one result of BenchmarkProcess or BenchmarkPostgres
// (correct/bench_test.go): its durability (a journal mode and synchronous
// setting, or a PostgreSQL isolation level: pg-rc, pg-rr, pg-ser), load and
// deliverers, then the metrics it reported.
var benchLine = regexp.MustCompile(`^Benchmark(?:Process|Postgres)/([\w-]+)/(\w+)/deliverers=(\d+)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op(.*)$`)

// benchMetric matches one "value unit" pair of a result's metrics.
var benchMetric = regexp.MustCompile(`([\d.]+) ([\w/]+)`)

// benchKey names one measurement.
type benchKey struct {
	durability, load string
	deliverers       int
}

// parseBench reads go test -bench's output into the metrics of each
// measurement ("events/s", and on PostgreSQL "retries/1000", "busy/1000",
// "errors/1000"), keeping the durabilities and deliverer counts in the
// order they came.
func parseBench(out []byte) (metrics map[benchKey]map[string]float64, durabilities []string, deliverers []int) {
	metrics = map[benchKey]map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		values := map[string]float64{}
		for _, pair := range benchMetric.FindAllStringSubmatch(m[4], -1) {
			v, _ := strconv.ParseFloat(pair[1], 64)
			values[pair[2]] = v
		}
		if _, ok := values["events/s"]; !ok {
			continue
		}
		metrics[benchKey{m[1], m[2], n}] = values
		if !slices.Contains(durabilities, m[1]) {
			durabilities = append(durabilities, m[1])
		}
		if !slices.Contains(deliverers, n) {
			deliverers = append(deliverers, n)
		}
	}
	return metrics, durabilities, deliverers
}

// renderBench prints the cost of idempotency as ratios to the bare
// baseline measured in the same run: distinct events (the inbox row and
// the key check added to every credit) and repeats (a duplicate answered
// from the inbox, with nothing to write). On PostgreSQL it adds, for the
// distinct events, the serialization failures retried and the deliveries
// answered busy or failed, per 1,000.
func renderBench(metrics map[benchKey]map[string]float64, durabilities []string, deliverers []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %10s %14s %16s %14s", "durability", "deliverers", "bare events/s", "distinct × bare", "repeat × bare")
	postgres := slices.ContainsFunc(durabilities, func(d string) bool { return strings.HasPrefix(d, "pg-") })
	if postgres {
		fmt.Fprintf(&b, " %9s %7s %7s", "retry/1k", "busy/1k", "fail/1k")
	}
	b.WriteString("\n")
	for _, d := range durabilities {
		for _, n := range deliverers {
			base := metrics[benchKey{d, "bare", n}]["events/s"]
			ratio := func(load string) string {
				r, ok := metrics[benchKey{d, load, n}]
				if !ok || base == 0 {
					return "-"
				}
				return fmt.Sprintf("%.2f", r["events/s"]/base)
			}
			fmt.Fprintf(&b, "%-12s %10d %14.0f %16s %14s", d, n, base, ratio("distinct"), ratio("repeat"))
			if distinct, ok := metrics[benchKey{d, "distinct", n}]; ok && strings.HasPrefix(d, "pg-") {
				fmt.Fprintf(&b, " %9.0f %7.0f %7.0f", distinct["retries/1000"], distinct["busy/1000"], distinct["errors/1000"])
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nbare: the same credit and a row, in one transaction, without the inbox key.\n" +
		"each ratio compares two measurements of this run; compare runs with benchstat:\n" +
		"  go test ./correct -run '^$' -bench BenchmarkProcess -count 6 > new.txt\n" +
		"  go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da old.txt new.txt\n")
	if postgres {
		b.WriteString("pg-*: PostgreSQL (IDEMLAB_PG) at each isolation level, 16 accounts, at most 32\n" +
			"connections; retry/busy/fail per 1,000 distinct events (see BenchmarkPostgres).\n")
	}
	return b.String()
}

// cmdBench runs BenchmarkProcess (and BenchmarkPostgres, with IDEMLAB_PG
// set) and prints its figures as ratios.
func cmdBench(stdout, stderr io.Writer) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	// 3 durabilities × 3 loads × 3 deliverer counts, and as many again on
	// PostgreSQL's three levels.
	bench, about, total := "BenchmarkProcess", "about a minute", 27
	if os.Getenv(report.EnvPostgres) != "" {
		bench, about, total = "BenchmarkProcess|BenchmarkPostgres", "about two minutes, PostgreSQL included", 54
	}
	args := []string{"test", "./correct", "-run", "^$", "-bench", bench, "-benchtime", "1s"}
	fmt.Fprintf(stderr, "running (%s): go %s\n", about, strings.Join(args, " "))
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var progress io.Writer
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		progress = stderr
	}
	out, err := runBench(cmd, progress, total)
	if err != nil {
		stderr.Write(out)
		return fmt.Errorf("the benchmarks failed: %v", err)
	}
	metrics, durabilities, deliverers := parseBench(out)
	if len(metrics) == 0 {
		stderr.Write(out)
		return fmt.Errorf("the benchmarks reported no events/s")
	}
	_, err = io.WriteString(stdout, renderBench(metrics, durabilities, deliverers))
	return err
}

// runBench runs the benchmarks and returns their combined output. go test
// prints a result line as each measurement ends; with a progress writer (a
// terminal) one line there counts them, "N of total measurements done".
func runBench(cmd *exec.Cmd, progress io.Writer, total int) ([]byte, error) {
	if progress == nil {
		return cmd.CombinedOutput()
	}
	var out bytes.Buffer
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		waited <- err
	}()
	done := 0
	fmt.Fprintf(progress, "\r\033[Kcompiling the benchmarks…")
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if benchLine.MatchString(sc.Text()) {
			done++
			fmt.Fprintf(progress, "\r\033[K%d of %d measurements done", done, total)
		}
	}
	fmt.Fprint(progress, "\r\033[K")
	return out.Bytes(), <-waited
}
