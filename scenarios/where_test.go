package scenarios_test

import (
	"fmt"
	"runtime"
	"testing"

	"idemlab/correct"
	"idemlab/lab/labtest"
)

// TestWhere checks that a failure is placed at the scenario line that
// reported it, through the engine's own Want helpers, and that a failure
// the harness finds on its own (a broken invariant) is placed nowhere.
func TestWhere(t *testing.T) {
	var line int
	sc := labtest.Scenario{Name: "Where", Run: func(r *labtest.Run) {
		db := r.Open(labtest.Account{ID: 1})
		_, _, line, _ = runtime.Caller(0)
		r.WantBalance(db, 1, 42) // line+1: the balance is 0
	}}
	cell := labtest.RunCell(t, sc, correct.Variant)
	want := fmt.Sprintf("scenarios/where_test.go:%d", line+1)
	if len(cell.Where) != 1 || cell.Where[0] != want {
		t.Errorf("RunCell(Where).Where = %q, want [%q]", cell.Where, want)
	}
}
