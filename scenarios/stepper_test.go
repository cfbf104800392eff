package scenarios_test

import (
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

var stepperPath = flag.String(report.StepperFlag, "", "write the tree of every schedule of the two-delivery scenarios, "+
	"for every variant, as JSON to `file` (the stepper of go run ./cmd/lab web and step reads it)")

// stepperScenarios are the scenarios of two concurrent deliveries whose
// every interleaving the engine enumerates: the races a student can play.
var stepperScenarios = []string{"Race", "ConflictRace"}

// TestStepper exports, for the stepper, every schedule of each race against
// each variant as a tree (report.BuildTree): the state of both sessions before
// each step, and each finished run's outcome and transcript. A server cannot
// replay a schedule itself (a bubble needs a *testing.T), so the tests
// record them all, and the stepper walks the record.
//
// Without -lab.stepper it checks the two trees the workshop's tests lean
// on: naive/checkthenact breaks Race in its shortest schedule
// A1 B1 A2 B2 A3 B3, and correct has no breaking leaf. Build itself checks
// that runs sharing a prefix saw the same states and transcript, i.e. that
// the replay is deterministic.
func TestStepper(t *testing.T) {
	var mu sync.Mutex
	out := &report.Stepper{}
	for _, name := range stepperScenarios {
		sc := scenarios.Named(scenarios.All, name)
		t.Run(name, func(t *testing.T) {
			for _, v := range variants.All {
				t.Run(v.Name, func(t *testing.T) {
					always := name == "Race" && (v.Name == "correct" || v.Name == "naive/checkthenact")
					if *stepperPath == "" && !always {
						t.Skip("only with -lab.stepper=FILE")
					}
					t.Parallel()
					cell := labtest.TraceCell(t, sc, v)
					tree, err := report.BuildTree(v.Name, v.Mistake, sc.Info(), cell)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := tree.Breaking == 0, cell.Pass; got != want {
						t.Errorf("%s × %s: tree without a breaking leaf = %v, but the cell passes = %v", v.Name, name, got, want)
					}
					switch {
					case v.Name == "correct" && tree.Unbreakable == "":
						t.Errorf("correct × %s: no word on why it cannot be broken", name)
					case v.Name == "naive/checkthenact" && name == "Race" && tree.Shortest != "A1 B1 A2 B2 A3 B3":
						t.Errorf("naive/checkthenact × Race: shortest breaking schedule = %q, want %q", tree.Shortest, "A1 B1 A2 B2 A3 B3")
					case v.Name == "naive/checkthenact" && !strings.Contains(tree.Goal, "credit twice"):
						t.Errorf("naive/checkthenact × %s: goal %q does not ask for the double credit", name, tree.Goal)
					}
					mu.Lock()
					out.Trees = append(out.Trees, tree)
					mu.Unlock()
				})
			}
		})
	}
	if *stepperPath == "" {
		checkFixture(t, out)
	} else {
		// Subtests finish in any order: list the trees as the registry does.
		order := map[string]int{}
		for i, v := range variants.All {
			order[v.Name] = i
		}
		slicesSortTrees(out.Trees, order)
		if err := out.Write(*stepperPath); err != nil {
			t.Errorf("writing the stepper file: %v", err)
		}
	}
}

// slicesSortTrees orders trees by scenario (as stepperScenarios lists them),
// then by variant (as the registry does).
func slicesSortTrees(trees []*report.Tree, order map[string]int) {
	scenario := func(name string) int { return slices.Index(stepperScenarios, name) }
	slices.SortFunc(trees, func(a, b *report.Tree) int {
		if c := scenario(a.Scenario) - scenario(b.Scenario); c != 0 {
			return c
		}
		return order[a.Variant] - order[b.Variant]
	})
}

// fixturePath holds the two trees TestStepper always builds, for the
// workshop's own tests (the terminal stepper, the server), which link no
// SQLite and so cannot build them: it must stay what the engine exports.
const fixturePath = "../workshop/testdata/race.json"

// checkFixture compares the trees with the workshop's fixture, or rewrites
// it with -update.
func checkFixture(t *testing.T, st *report.Stepper) {
	if t.Failed() || len(st.Trees) != 2 {
		return
	}
	slicesSortTrees(st.Trees, map[string]int{"correct": 0, "naive/checkthenact": 1})
	got, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(fixturePath, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatalf("%v\nto create it: go test ./scenarios -run TestStepper -update", err)
	}
	if string(append(got, '\n')) != string(want) {
		t.Errorf("the stepper's trees differ from %s:\n%s\nif that is intended: go test ./scenarios -run TestStepper -update",
			fixturePath, firstDifference(string(want), string(got)+"\n"))
	}
}
