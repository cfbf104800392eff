package main

import (
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// explainCells are cells whose stories have the longest lines: long
// statements, long errors as results and as answers, an argument rewritten
// into a value longer than a line, and long broken expectations.
var explainCells = [][2]string{
	{"naive/checkthenact", "Race"},
	{"correct", "PayloadConflict"},
	{"naive/deferred", "LockTimeout"},
	{"naive/markfirst", "Rollback"},
	{"naive/checkthenact", "SchemaGuards"},
}

// TestExplainFits renders explain's whole output for real cells and holds
// every line to report.Width, counted in runes. The output of the
// renderer before transcripts were wrapped is kept as the case the check
// must reject.
func TestExplainFits(t *testing.T) {
	rep := labtest.NewReport(scenarios.All, variants.All)
	for _, c := range explainCells {
		for _, v := range variants.All {
			for _, sc := range scenarios.All {
				if v.Name == c[0] && sc.Name == c[1] {
					rep.Set(v.Name, sc.Name, labtest.RunCell(t, sc, v))
				}
			}
		}
		out, err := renderExplain(rep, c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		if line, n := report.WidestLine(out); n > report.Width {
			t.Errorf("renderExplain(%s, %s) has a line of %d runes, want at most %d:\n%s\nwhole:\n%s", c[0], c[1], n, report.Width, line, out)
		}
	}
	unwrapped := "B3: INSERT INTO inbox (source, event_id, account_id, amount) VALUES ('provider-a', 'evt-3', 1, 500)" +
		"   -> error: constraint failed: UNIQUE constraint failed: inbox.source, inbox.event_id (1555)\n"
	if _, n := report.WidestLine(unwrapped); n <= report.Width {
		t.Errorf("WidestLine(the unwrapped rendering) = %d, want over %d: the check cannot fail", n, report.Width)
	}
	if line, n := report.WidestLine(strings.Repeat("✓", report.Width)); n != report.Width {
		t.Errorf("WidestLine(%q) = %d, want %d: columns are runes", line, n, report.Width)
	}
}
