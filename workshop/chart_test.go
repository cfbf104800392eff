package workshop

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"idemlab/lab/report"
)

// TestBenchSVG draws a report of two durabilities and finds each measured
// median as a point of its panel, a higher median above a lower one, and
// a name from the file escaped, not markup.
func TestBenchSVG(t *testing.T) {
	sp := func(m float64) report.Spread { return report.Spread{Median: m, Min: m * 0.9, Max: m * 1.1} }
	b := &report.Bench{Runs: 6, Rows: []report.BenchRow{
		{Durability: "WAL-NORMAL", Deliverers: 1, Runs: 6, Rates: map[string]report.Spread{"distinct": sp(9000)}, Ratios: map[string]report.Spread{"distinct": sp(0.7)}},
		{Durability: "WAL-NORMAL", Deliverers: 64, Runs: 6, Rates: map[string]report.Spread{"distinct": sp(12000)}, Ratios: map[string]report.Spread{"distinct": sp(0.9)}},
		{Durability: "pg-rr<b>", Deliverers: 1, Runs: 6, Rates: map[string]report.Spread{"distinct": sp(300)}, Ratios: map[string]report.Spread{"distinct": sp(1.1)}},
	}}
	svg, err := BenchSVG(b)
	if err != nil {
		t.Fatal(err)
	}
	text := string(svg)
	if strings.Contains(text, "<b>") || !strings.Contains(text, "pg-rr&lt;b&gt;") {
		t.Errorf("BenchSVG with a durability named pg-rr<b> = %s, want the name escaped", text)
	}
	point := regexp.MustCompile(`<circle class="point" cx="[\d.]+" cy="([\d.]+)"[^>]* data-panel="(\w+)" data-deliverers="(\d+)" data-median="([\d.e+]+)"`)
	cy := map[string]map[float64]float64{}
	for _, m := range point.FindAllStringSubmatch(text, -1) {
		y, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("BenchSVG point %q: cy = %v, want a number", m[0], err)
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			t.Fatalf("BenchSVG point %q: data-median = %v, want a number", m[0], err)
		}
		if cy[m[2]] == nil {
			cy[m[2]] = map[float64]float64{}
		}
		cy[m[2]][v] = y
	}
	for panel, want := range map[string][]float64{"rate": {300, 9000, 12000}, "ratio": {0.7, 0.9, 1.1}} {
		if len(cy[panel]) != len(want) {
			t.Errorf("BenchSVG's %s panel has points %v, want medians %v", panel, cy[panel], want)
			continue
		}
		for i := 1; i < len(want); i++ {
			lo, hi := cy[panel][want[i-1]], cy[panel][want[i]]
			if !(hi < lo) {
				t.Errorf("BenchSVG's %s panel draws %g at y %g and %g at y %g, want the greater higher (smaller y)", panel, want[i-1], lo, want[i], hi)
			}
		}
	}
}
