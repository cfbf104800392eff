package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"idemlab/lab/report"
	"idemlab/workshop"
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

// benchRuns are the metrics of each measurement ("events/s", and on
// PostgreSQL "retries/1000", "busy/1000", "errors/1000"), one map per run,
// in the order the runs came.
type benchRuns map[benchKey][]map[string]float64

// parseBench reads go test -bench's output, of one run or of several one
// after another, keeping the durabilities and deliverer counts in the order
// they came.
func parseBench(out []byte) (metrics benchRuns, durabilities []string, deliverers []int) {
	metrics = benchRuns{}
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
		k := benchKey{m[1], m[2], n}
		metrics[k] = append(metrics[k], values)
		if !slices.Contains(durabilities, m[1]) {
			durabilities = append(durabilities, m[1])
		}
		if !slices.Contains(deliverers, n) {
			deliverers = append(deliverers, n)
		}
	}
	return metrics, durabilities, deliverers
}

// spread summarizes vs (not empty).
func spread(vs []float64) report.Spread {
	s := slices.Clone(vs)
	slices.Sort(s)
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return report.Spread{Median: median, Min: s[0], Max: s[len(s)-1]}
}

// summarizeBench pairs each load's run i with the bare work's run i (the
// same binary, a few seconds apart) and summarizes the rates and ratios.
func summarizeBench(metrics benchRuns, durabilities []string, deliverers []int) report.Bench {
	var r report.Bench
	for _, d := range durabilities {
		for _, n := range deliverers {
			bare := metrics[benchKey{d, "bare", n}]
			if len(bare) == 0 {
				continue
			}
			row := report.BenchRow{Durability: d, Deliverers: n, Runs: len(bare),
				Rates: map[string]report.Spread{}, Ratios: map[string]report.Spread{}}
			var rates []float64
			for _, m := range bare {
				rates = append(rates, m["events/s"])
			}
			row.Bare = spread(rates)
			for _, load := range []string{"distinct", "repeat"} {
				var ratios, rates []float64
				for i, m := range metrics[benchKey{d, load, n}] {
					rates = append(rates, m["events/s"])
					if i < len(bare) && bare[i]["events/s"] > 0 {
						ratios = append(ratios, m["events/s"]/bare[i]["events/s"])
					}
				}
				if len(rates) > 0 {
					row.Rates[load] = spread(rates)
				}
				if len(ratios) > 0 {
					row.Ratios[load] = spread(ratios)
				}
			}
			if distinct := metrics[benchKey{d, "distinct", n}]; strings.HasPrefix(d, "pg-") && len(distinct) > 0 {
				row.Per1000 = map[string]report.Spread{}
				for _, name := range []string{"retries", "busy", "errors"} {
					var vs []float64
					for _, m := range distinct {
						vs = append(vs, m[name+"/1000"])
					}
					row.Per1000[name] = spread(vs)
				}
			}
			r.Runs = max(r.Runs, row.Runs)
			r.Rows = append(r.Rows, row)
		}
	}
	return r
}

// ratioText is a ratio's median and, over more than one run, its min–max.
func ratioText(s report.Spread, ok bool, runs int) string {
	if !ok {
		return "-"
	}
	f := func(v float64) string {
		if v >= 10 {
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	if runs < 2 {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

// renderBench prints the cost of idempotency as ratios to the bare
// baseline measured in the same run: distinct events (the inbox row and
// the key check added to every credit) and repeats (a duplicate answered
// from the inbox, with nothing to write), each as the median over the runs
// with its min–max. On PostgreSQL it adds, for the distinct events, the
// serialization failures retried and the deliveries answered busy or
// failed, per 1,000 (medians).
func renderBench(r report.Bench) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %10s %13s %17s %17s", "durability", "deliverers", "bare events/s", "distinct × bare", "repeat × bare")
	postgres := slices.ContainsFunc(r.Rows, func(row report.BenchRow) bool { return row.Per1000 != nil })
	if postgres {
		fmt.Fprintf(&b, " %8s %7s %7s", "retry/1k", "busy/1k", "fail/1k")
	}
	b.WriteString("\n")
	for _, row := range r.Rows {
		distinct, dok := row.Ratios["distinct"]
		repeat, rok := row.Ratios["repeat"]
		fmt.Fprintf(&b, "%-11s %10d %13.0f %17s %17s", row.Durability, row.Deliverers, row.Bare.Median,
			ratioText(distinct, dok, row.Runs), ratioText(repeat, rok, row.Runs))
		if row.Per1000 != nil {
			fmt.Fprintf(&b, " %8.0f %7.0f %7.0f", row.Per1000["retries"].Median, row.Per1000["busy"].Median, row.Per1000["errors"].Median)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nbare: the same credit and a row, in one transaction, without the inbox key.\n"+
		"each ratio pairs two measurements of one run: median (min–max) over %d runs of\n  %s\n"+
		"compare runs with benchstat:\n"+
		"  go test ./correct -run '^$' -bench BenchmarkProcess -count 6 > new.txt\n"+
		"  go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da old.txt new.txt\n", r.Runs, r.Command)
	if postgres {
		b.WriteString("pg-*: PostgreSQL (IDEMLAB_PG) at each isolation level, 16 accounts, at most 32\n" +
			"connections; retry/busy/fail per 1,000 distinct events (see BenchmarkPostgres).\n")
	}
	return b.String()
}

// cmdBench runs BenchmarkProcess (and BenchmarkPostgres, with IDEMLAB_PG
// set) count times, prints its figures as ratios and writes them as JSON
// to out and as a chart to svg, when named.
func cmdBench(stdout, stderr io.Writer, count int, out, svg string) error {
	if count < 1 {
		return usagef("-count must be at least 1, not %d", count)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	// 3 durabilities × 3 loads × 3 deliverer counts, and as many again on
	// PostgreSQL's three levels.
	bench, about, total := "BenchmarkProcess", "about 20 s a run", 27
	if os.Getenv(report.EnvPostgres) != "" {
		bench, about, total = "BenchmarkProcess|BenchmarkPostgres", "about 60 s a run, PostgreSQL included", 54
	}
	dir, err := os.MkdirTemp("", "labbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	binary := filepath.Join(dir, "correct.test")
	build := exec.Command("go", "test", "-c", "-o", binary, "./correct")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		stderr.Write(b)
		return fmt.Errorf("building the benchmarks failed: %v", err)
	}
	// Runs one after another, not go test -count, which repeats each
	// measurement before the next: a ratio's two rates are then seconds
	// apart, not minutes, and a slow minute of the machine shows as a
	// spread, not as a cost.
	args := []string{"-test.run", "^$", "-test.bench", bench, "-test.benchtime", "0.3s", "-test.count", "1"}
	command := "go test ./correct -run '^$' -bench '" + bench + "' -benchtime 0.3s -count 1"
	fmt.Fprintf(stderr, "running %d times (%s):\n  %s\n", count, about, command)
	progress := terminal(stderr)
	var all []byte
	done := 0
	for range count {
		cmd := exec.Command(binary, args...)
		cmd.Dir = filepath.Join(root, "correct")
		var o []byte
		o, done, err = runBench(cmd, progress, done, total*count)
		all = append(all, o...)
		if err != nil {
			stderr.Write(o)
			return fmt.Errorf("the benchmarks failed: %v", err)
		}
	}
	metrics, durabilities, deliverers := parseBench(all)
	if len(metrics) == 0 {
		stderr.Write(all)
		return fmt.Errorf("the benchmarks reported no events/s")
	}
	r := summarizeBench(metrics, durabilities, deliverers)
	r.Command = command
	r.When = time.Now().UTC().Format(time.RFC3339)
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.Load = strings.Join(strings.Fields(string(load))[:3], " ")
	}
	if out != "" {
		j, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, append(j, '\n'), 0o644); err != nil {
			return err
		}
	}
	if svg != "" {
		chart, err := workshop.BenchSVG(&r)
		if err != nil {
			return err
		}
		if err := os.WriteFile(svg, chart, 0o644); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, renderBench(r))
	return err
}

// runBench runs the benchmarks and returns their combined output. go test
// prints a result line as each measurement ends; with a progress writer (a
// terminal) one line there counts them from done, "N of total measurements
// done". It returns the count with this run's added.
func runBench(cmd *exec.Cmd, progress io.Writer, done, total int) ([]byte, int, error) {
	if progress == nil {
		out, err := cmd.CombinedOutput()
		return out, done, err
	}
	var out bytes.Buffer
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, done, err
	}
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		waited <- err
	}()
	fmt.Fprintf(progress, "\r\033[K%d of %d measurements done", done, total)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if benchLine.MatchString(sc.Text()) {
			done++
			fmt.Fprintf(progress, "\r\033[K%d of %d measurements done", done, total)
		}
	}
	fmt.Fprint(progress, "\r\033[K")
	return out.Bytes(), done, <-waited
}
