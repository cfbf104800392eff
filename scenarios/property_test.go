package scenarios_test

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

var catchSeeds = flag.Int("lab.catchseeds", 0, "run Property on every naive variant with `n` distinct seeds and report how fast it catches each (0: skip)")

// TestPropertyCatches measures what the matrix shows once: that Property
// catches every naive variant the golden matrix says it catches, whatever
// the seed (naive/nofk's mistake shows only where the schema alone guards,
// which Property's stories never reach: SchemaGuards catches it). With -lab.catchseeds=100 it
// runs Property with seeds 1…100 on each naive variant, without shrinking
// (only finding the counterexample is timed), fails if any seed misses a
// variant, and logs the median and worst time to catch.
//
//	go test ./scenarios -run TestPropertyCatches -lab.catchseeds=100 -v
func TestPropertyCatches(t *testing.T) {
	if *catchSeeds == 0 {
		t.Skip("a measurement: run with -lab.catchseeds=100")
	}
	property := scenarios.Named(scenarios.All, "Property")
	golden, err := readGolden()
	if err != nil {
		t.Fatalf("reading the golden matrix: %v", err)
	}
	defer flag.Set("rapid.seed", flag.Lookup("rapid.seed").Value.String())
	defer flag.Set("rapid.shrinktime", flag.Lookup("rapid.shrinktime").Value.String())
	// No shrinking: a zero limit ends it before its first attempt.
	flag.Set("rapid.shrinktime", "0s")

	var table strings.Builder
	fmt.Fprintf(&table, "%-24s %8s %10s %10s\n", "variant", "caught", "median", "worst")
	for _, v := range variants.All {
		if mark, ok := golden[v.Name]["Property"]; v.Correct() || !ok || mark != report.Fail {
			continue
		}
		var times []time.Duration
		missed := []int{}
		for seed := 1; seed <= *catchSeeds; seed++ {
			flag.Set("rapid.seed", strconv.Itoa(seed))
			start := time.Now()
			cell := labtest.RunCell(t, property, v)
			elapsed := time.Since(start)
			if cell.Pass {
				missed = append(missed, seed)
				continue
			}
			times = append(times, elapsed)
		}
		if len(missed) > 0 {
			t.Errorf("Property misses %s with seeds %v: a gap in the model", v.Name, missed)
		}
		slices.Sort(times)
		median, worst := time.Duration(0), time.Duration(0)
		if len(times) > 0 {
			median, worst = times[len(times)/2], times[len(times)-1]
		}
		fmt.Fprintf(&table, "%-24s %4d/%-3d %10v %10v\n", v.Name, len(times), *catchSeeds,
			median.Round(time.Millisecond), worst.Round(time.Millisecond))
	}
	t.Logf("time to catch, seeds 1…%d:\n%s", *catchSeeds, table.String())
}
