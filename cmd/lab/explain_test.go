package main

import (
	"bytes"
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// timesTold counts how often failure is told in out, whatever the
// wrapping.
func timesTold(out, failure string) int {
	return strings.Count(unwrapped(out), unwrapped(failure))
}

// TestExplainTellsFailuresOnce runs real cells and holds explain to
// telling each broken guarantee once: in the transcript, where it broke,
// with the line that found it; a tally that quotes a failure told above
// it ("18 of 20 interleavings break it; the shortest, …: balance …") does
// not quote it again. The old output, which told the race's balance three
// times, is kept as the case the count must reject.
func TestExplainTellsFailuresOnce(t *testing.T) {
	cells := [][2]string{
		{"naive/checkthenact", "Race"},
		{"naive/markfirst", "Rollback"},
		{"naive/insertorreplace", "Duplicate"},
		{"naive/busyasduplicate", "LockTimeout"},
	}
	rep := labtest.NewReport(scenarios.All, variants.All)
	for _, cell := range cells {
		for _, v := range variants.All {
			for _, sc := range scenarios.All {
				if v.Name == cell[0] && sc.Name == cell[1] {
					rep.Set(v.Name, sc.Name, labtest.RunCell(t, sc, v))
				}
			}
		}
		c := rep.Cell(cell[0], cell[1])
		out, err := renderExplain(rep, cell[0], cell[1])
		if err != nil {
			t.Fatal(err)
		}
		var told []string // every FAIL line's own failure
		for _, l := range c.Lines {
			if l.Kind != report.KindFail {
				continue
			}
			text := strings.TrimPrefix(l.Text, "FAIL: ")
			for _, e := range told {
				text = strings.TrimSuffix(text, ": "+e)
			}
			told = append(told, text)
		}
		for _, f := range told {
			if n := timesTold(out, f); n != 1 {
				t.Errorf("renderExplain(%s, %s) tells %q %d times, want once:\n%s", cell[0], cell[1], f, n, out)
			}
		}
		for _, f := range c.Failures {
			n := timesTold(out, f)
			for _, e := range told {
				if head, ok := strings.CutSuffix(f, ": "+e); n == 0 && ok && timesTold(out, head) == 1 {
					n = 1 // a tally, told without the failure it quotes
				}
			}
			if n != 1 {
				t.Errorf("renderExplain(%s, %s) tells the cell's failure %q %d times, want once:\n%s", cell[0], cell[1], f, n, out)
			}
		}
		for i, w := range c.Where {
			if w != "" && !strings.Contains(out, w+": ") {
				t.Errorf("renderExplain(%s, %s) does not say where failure %d was found (%s):\n%s", cell[0], cell[1], i+1, w, out)
			}
		}
		if cell[1] == "Race" && timesTold(out, "balance of account 1 = 1000, want 500") != 1 {
			t.Errorf("renderExplain(%s, Race) tells the balance %d times, want once:\n%s", cell[0],
				timesTold(out, "balance of account 1 = 1000, want 500"), out)
		}
	}
	old := "failures:\n  scenarios/concurrency.go:64: 18 of 20 interleavings break it; the shortest, A1 B1 A2 B2 A3 B3:\n" +
		"      balance of account 1 = 1000, want 500\ntranscript:\nschedule: A1 B1 A2 B2 A3 B3\n" +
		"FAIL: balance of account 1 = 1000, want 500\n" +
		"FAIL: 18 of 20 interleavings break it; the shortest, A1 B1 A2 B2 A3 B3:\n    balance of account 1 = 1000, want 500\n"
	if n := timesTold(old, "balance of account 1 = 1000, want 500"); n != 3 {
		t.Errorf("timesTold(the old explain, the balance) = %d, want 3: the check cannot fail", n)
	}
}

// TestStepDefaultsToRace: step with a variant alone plays its Race.
func TestStepDefaultsToRace(t *testing.T) {
	if !labtest.FullSuite() {
		t.Skipf("the quick suite: step runs go test ./scenarios, which %s=1 runs", labtest.FullEnv)
	}
	var stdout, stderr bytes.Buffer
	if err := cmdStep(strings.NewReader("q\n"), &stdout, &stderr, []string{"checkthenact"}); err != nil {
		t.Fatalf("cmdStep(checkthenact) error = %v\n%s", err, stderr.String())
	}
	if want := "Make naive/checkthenact credit twice: find a schedule where Race fails"; !strings.Contains(stdout.String(), want) {
		t.Errorf("cmdStep(checkthenact) = %q, want it to play Race: %q", stdout.String(), want)
	}
}
