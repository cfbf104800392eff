package workshop

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"idemlab/lab/report"
)

// The cost chart: what go run ./cmd/lab bench measured, drawn as SVG with
// html/template (no charting library: two panels of lines and whiskers are
// a few dozen lines of arithmetic, and the template escapes every name the
// JSON brings). One panel is correct's events/s against the number of
// deliverers, on a log scale; the other its ratio to the bare work of the
// same run. Each durability (a SQLite journal mode and synchronous
// setting, a PostgreSQL isolation level) is one line; each point is the
// median over the runs, its whisker the runs' min–max.

// Chart geometry, in SVG user units (pixels at 100%).
const (
	chartW, chartH     = 1000, 440
	panelW, panelH     = 380, 280
	panelTop           = 56
	rateLeft, ratioLft = 80, 580
	ratioCap           = 2.0 // the ratio axis ends here at most; longer whiskers are cut
	legendRow          = 6   // legend entries a row
)

// seriesColors are the lines' colours, in the durabilities' order: apart
// in hue and in lightness, so that they stay apart in grey too.
var seriesColors = []string{"#1f77b4", "#2ca02c", "#d62728", "#7b3fa0", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#555555"}

type chart struct {
	W, H   float64
	Title  string
	Note   string
	Panels []chartPanel
	Legend []chartSeries
}

type chartPanel struct {
	Name, Title      string
	X, Y, W, H       float64
	XTicks, YTicks   []chartTick
	Refs             []chartTick // dotted lines across the panel: 0.8× and 1×
	Series           []chartSeries
	XLabel, YLabel   string
	YLabelX, YLabelY float64
}

type chartTick struct {
	At    float64 // x for an x tick, y for a y tick
	Label string
}

type chartSeries struct {
	Name, Color, Dash string
	Path              string // the polyline's points
	Points            []chartPoint
	LegendX, LegendY  float64
}

type chartPoint struct {
	X, Y, YLow, YHigh float64 // YLow is the min's y (below), YHigh the max's
	Deliverers        int
	Median, Min, Max  float64
	Label             string
}

// BenchSVG draws b as a standalone SVG document: the chart the workshop
// page shows and the one in docs/performance.md.
func BenchSVG(b *report.Bench) ([]byte, error) {
	var buf bytes.Buffer
	if err := chartTemplate.ExecuteTemplate(&buf, "chart", benchChart(b)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var chartTemplate = template.Must(template.New("").Funcs(template.FuncMap{
	"f":   func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"g":   func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
	"add": func(a, b float64) float64 { return a + b },
	"sub": func(a, b float64) float64 { return a - b },
	"div": func(a, b float64) float64 { return a / b },
}).ParseFS(assets, "web/chart.svg"))

// benchChart lays b out.
func benchChart(b *report.Bench) chart {
	var names []string
	var counts []int
	for _, row := range b.Rows {
		if !slices.Contains(names, row.Durability) {
			names = append(names, row.Durability)
		}
		if !slices.Contains(counts, row.Deliverers) {
			counts = append(counts, row.Deliverers)
		}
	}
	slices.Sort(counts)
	c := chart{W: chartW, H: chartH,
		Title: fmt.Sprintf("correct/ on distinct events: median and min–max over %d runs", b.Runs),
		Note:  "one line per durability; dashed lines: PostgreSQL isolation levels; dotted: 0.8× and 1× the bare work",
	}
	rate := chartPanel{Name: "rate", Title: "events/s (log scale)", X: rateLeft, Y: panelTop, W: panelW, H: panelH}
	ratio := chartPanel{Name: "ratio", Title: "× the bare work of the same run", X: ratioLft, Y: panelTop, W: panelW, H: panelH}
	for _, p := range []*chartPanel{&rate, &ratio} {
		p.XLabel = "deliverers"
		for _, n := range counts {
			p.XTicks = append(p.XTicks, chartTick{At: xOf(*p, counts, n), Label: strconv.Itoa(n)})
		}
	}
	// The rate axis: whole powers of ten around every min and max.
	lo, hi := math.Inf(1), math.Inf(-1)
	ratioHi := 1.2
	for _, row := range b.Rows {
		if s, ok := row.Rates["distinct"]; ok && s.Min > 0 {
			lo, hi = min(lo, s.Min), max(hi, s.Max)
		}
		if s, ok := row.Ratios["distinct"]; ok {
			ratioHi = max(ratioHi, min(s.Max, ratioCap))
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	decLo, decHi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if decHi == decLo {
		decHi++
	}
	rateY := func(v float64) float64 {
		return rate.Y + rate.H - (math.Log10(v)-decLo)/(decHi-decLo)*rate.H
	}
	for d := decLo; d <= decHi; d++ {
		rate.YTicks = append(rate.YTicks, chartTick{At: rateY(math.Pow(10, d)), Label: formatRate(math.Pow(10, d))})
	}
	ratioHi = math.Ceil(ratioHi*5) / 5
	ratioY := func(v float64) float64 { return ratio.Y + ratio.H - min(v, ratioHi)/ratioHi*ratio.H }
	for v := 0.0; v <= ratioHi+1e-9; v += 0.2 {
		ratio.YTicks = append(ratio.YTicks, chartTick{At: ratioY(v), Label: strconv.FormatFloat(v, 'f', 1, 64) + "×"})
	}
	ratio.Refs = []chartTick{{At: ratioY(0.8), Label: "0.8×"}, {At: ratioY(1), Label: "1×"}}
	for i, name := range names {
		color := seriesColors[i%len(seriesColors)]
		dash := ""
		if strings.HasPrefix(name, "pg-") {
			dash = "6 3"
		}
		rs := chartSeries{Name: name, Color: color, Dash: dash}
		qs := rs
		for _, row := range b.Rows {
			if row.Durability != name {
				continue
			}
			// Each line's points stand a little apart from the others' at
			// the same count, so that the whiskers do not hide each other.
			dodge := (float64(i) - float64(len(names)-1)/2) * 5
			x := xOf(rate, counts, row.Deliverers) + dodge
			if s, ok := row.Rates["distinct"]; ok && s.Min > 0 {
				rs.Points = append(rs.Points, chartPoint{X: x, Y: rateY(s.Median), YLow: rateY(s.Min), YHigh: rateY(s.Max),
					Deliverers: row.Deliverers, Median: s.Median, Min: s.Min, Max: s.Max,
					Label: fmt.Sprintf("%s, %s: %s events/s (%s–%s), %d runs", name, deliverersText(row.Deliverers),
						formatRate(s.Median), formatRate(s.Min), formatRate(s.Max), row.Runs)})
			}
			x = xOf(ratio, counts, row.Deliverers) + dodge
			if s, ok := row.Ratios["distinct"]; ok {
				qs.Points = append(qs.Points, chartPoint{X: x, Y: ratioY(s.Median), YLow: ratioY(s.Min), YHigh: ratioY(s.Max),
					Deliverers: row.Deliverers, Median: s.Median, Min: s.Min, Max: s.Max,
					Label: fmt.Sprintf("%s, %s: %.2f× the bare work (%.2f–%.2f), %d runs", name, deliverersText(row.Deliverers),
						s.Median, s.Min, s.Max, row.Runs)})
			}
		}
		rs.Path, qs.Path = polyline(rs.Points), polyline(qs.Points)
		rate.Series, ratio.Series = append(rate.Series, rs), append(ratio.Series, qs)
		// The legend: rows of six under the panels.
		l := chartSeries{Name: name, Color: color, Dash: dash,
			LegendX: rateLeft + float64(i%legendRow)*150, LegendY: panelTop + panelH + 62 + float64(i/legendRow)*22}
		c.Legend = append(c.Legend, l)
	}
	c.H += float64((len(names)-1)/legendRow) * 22
	c.Panels = []chartPanel{rate, ratio}
	return c
}

// xOf places a deliverer count on a panel's log scale.
func xOf(p chartPanel, counts []int, n int) float64 {
	if len(counts) < 2 {
		return p.X + p.W/2
	}
	lo, hi := math.Log(float64(counts[0])), math.Log(float64(counts[len(counts)-1]))
	const pad = 30
	return p.X + pad + (math.Log(float64(n))-lo)/(hi-lo)*(p.W-2*pad)
}

func polyline(ps []chartPoint) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%.1f,%.1f", p.X, p.Y))
	}
	return strings.Join(parts, " ")
}

// formatRate writes events/s as the tables do: whole numbers, with k above
// ten thousand.
func formatRate(v float64) string {
	if v >= 10000 {
		return strconv.FormatFloat(v/1000, 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// spreadText writes a figure over the runs as the tables in docs/ do:
// median (min–max), events/s as whole numbers and ratios to two places.
func spreadText(s report.Spread, ratio bool) string {
	f := formatRate
	if ratio {
		f = func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

func deliverersText(n int) string {
	if n == 1 {
		return "1 deliverer"
	}
	return strconv.Itoa(n) + " deliverers"
}
