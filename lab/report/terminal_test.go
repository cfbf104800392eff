package report

import (
	"strings"
	"testing"
)

// TestTerminalKeepsClaims: a terminal's legend moves a claim list to the
// next line whole; the golden file's breaks it, the case to reject.
func TestTerminalKeepsClaims(t *testing.T) {
	rep := New([]ScenarioInfo{{Name: "PayloadConflict", Short: "Conf", Claims: "C2, C6",
		Shows: "same key, other amount or account: a conflict error, nothing changes"},
		{Name: "Crash", Short: "Crash", Claims: "C13", Shows: "killed"}}, []VariantResults{{Name: "correct"}})
	if got := rep.Terminal(); !strings.Contains(got, "\n       (C2, C6)\n") {
		t.Errorf("Terminal() = %q, want (C2, C6) whole on a line of its own", got)
	}
	if got := rep.Matrix(); !strings.Contains(got, "(C2,\n       C6)") {
		t.Errorf("Matrix() = %q, want the golden file's legend as it was, (C2,\\n C6)", got)
	}
}
