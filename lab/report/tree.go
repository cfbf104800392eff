package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
)

// Tree is every schedule of one two-delivery scenario against one variant,
// as a tree: the root is the state before the first step, each edge a
// session chosen to take its next step, each leaf a finished run.
//
// It is built from the exhaustive list of interleavings the engine ran
// (labtest.Run.Interleavings), so walking it replays exactly what the engine
// did: a move is an index lookup, undo is going back up, and "this variant
// cannot be broken here" is a fact about the whole tree, not a claim.
type Tree struct {
	Variant  string `json:"variant"`
	Mistake  string `json:"mistake,omitempty"`
	Scenario string `json:"scenario"`
	Shows    string `json:"shows"`
	// Goal is what the student is asked to do.
	Goal string `json:"goal"`
	// Unbreakable explains, when no leaf breaks a guarantee, why none can.
	Unbreakable string `json:"unbreakable,omitempty"`
	// Nodes[0] is the root.
	Nodes  []Node `json:"nodes"`
	Leaves []Leaf `json:"leaves"`
	// Breaking counts the leaves that break a guarantee; Shortest is the
	// shortest of them, the most interleaved among equals, as the matrix
	// reports it.
	Breaking int    `json:"breaking"`
	Shortest string `json:"shortest,omitempty"`
}

// Node is the state of a run before a decision, or a finished run.
type Node struct {
	// Step is the step that led here ("B2"); "" at the root.
	Step string `json:"step,omitempty"`
	// Sessions is every session's state; nil at a leaf.
	Sessions []SessionState `json:"sessions,omitempty"`
	// Lines is how many lines of the transcript have been written here.
	// They are the first Lines lines of any leaf below (Below).
	Lines int `json:"lines"`
	// Next maps a ready session to the node its step leads to.
	Next map[string]int `json:"next,omitempty"`
	// Leaf is the index in Leaves of the run that ends here, or -1.
	Leaf int `json:"leaf"`
	// Below is a leaf under this node, whose transcript it shows a
	// prefix of.
	Below int `json:"below"`
	// State is the database here: before the decision, or at a leaf once
	// every session is done.
	State *DBState `json:"state,omitempty"`
}

// Leaf is one finished interleaving.
type Leaf struct {
	Schedule string   `json:"schedule"`
	Outcome  string   `json:"outcome"`
	Failures []string `json:"failures,omitempty"`
	// Neutral says why the interleaving could not judge the handler (a
	// fault meant for it never fired); it then has no Failures.
	Neutral string   `json:"neutral,omitempty"`
	Waited  []string `json:"waited,omitempty"`
	Lines   []Line   `json:"lines"`
}

// Held reports whether no guarantee broke in the run: every one held, or
// it could not judge (Neutral).
func (l Leaf) Held() bool { return len(l.Failures) == 0 }

// BuildTree makes the tree of one cell run with traces (labtest.TraceCell). It
// fails if the interleavings do not form a tree — two runs that took the
// same steps but saw different states, which would mean the replay is not
// deterministic — or if one has no trace.
func BuildTree(variant, mistake string, sc ScenarioInfo, cell *Cell) (*Tree, error) {
	t := &Tree{Variant: variant, Mistake: mistake, Scenario: sc.Name, Shows: sc.Shows,
		Nodes: []Node{{Leaf: -1, Below: -1}}}
	if len(cell.Permutations) == 0 {
		return nil, fmt.Errorf("%s × %s: no interleavings: not a scenario of several deliveries", variant, sc.Name)
	}
	for _, p := range cell.Permutations {
		if p.Trace == nil {
			return nil, fmt.Errorf("%s × %s, %s: no trace; run the cell with labtest.TraceCell", variant, sc.Name, p.Schedule)
		}
		steps := strings.Fields(p.Schedule)
		if len(steps) != len(p.Trace.Decisions) {
			return nil, fmt.Errorf("%s × %s, %s: %d steps but %d decisions", variant, sc.Name, p.Schedule, len(steps), len(p.Trace.Decisions))
		}
		leaf := len(t.Leaves)
		t.Leaves = append(t.Leaves, Leaf{Schedule: p.Schedule, Outcome: p.Outcome, Failures: p.Failures, Neutral: p.Neutral,
			Waited: p.Waited, Lines: p.Trace.Lines})
		at := 0
		for i, step := range steps {
			d := p.Trace.Decisions[i]
			n := &t.Nodes[at]
			if n.Below < 0 {
				n.Sessions, n.Lines, n.Below, n.State = d.Sessions, d.Lines, leaf, d.State
			} else if err := samePrefix(t, n, d, p.Trace.Lines); err != nil {
				return nil, fmt.Errorf("%s × %s: %s and %s share %s but %v: the replay is not deterministic",
					variant, sc.Name, t.Leaves[n.Below].Schedule, p.Schedule, strings.Join(steps[:i], " "), err)
			}
			if n.Leaf >= 0 {
				return nil, fmt.Errorf("%s × %s: %s ends where %s goes on", variant, sc.Name, t.Leaves[n.Leaf].Schedule, p.Schedule)
			}
			session := strings.TrimRight(step, "0123456789")
			next, ok := n.Next[session]
			if !ok {
				if n.Next == nil {
					n.Next = map[string]int{}
				}
				next = len(t.Nodes)
				n.Next[session] = next
				t.Nodes = append(t.Nodes, Node{Step: step, Leaf: -1, Below: -1})
			}
			at = next
		}
		n := &t.Nodes[at]
		if n.Below >= 0 {
			return nil, fmt.Errorf("%s × %s: schedule %s is run twice, or goes on elsewhere", variant, sc.Name, p.Schedule)
		}
		n.Leaf, n.Below, n.Lines, n.State = leaf, leaf, len(p.Trace.Lines), p.Trace.End
	}
	var shortest []string
	for _, l := range t.Leaves {
		if l.Held() {
			continue
		}
		t.Breaking++
		s := strings.Fields(l.Schedule)
		if shortest == nil || len(s) < len(shortest) || len(s) == len(shortest) && runs(s) < runs(shortest) {
			shortest = s
		}
	}
	t.Shortest = strings.Join(shortest, " ")
	t.Goal, t.Unbreakable = goal(t)
	return t, nil
}

// runs counts the steps that follow a step of the same session: among the
// shortest breaking schedules, the one with the fewest is the closest to
// round robin, the one the engine itself reports (A1 B1 A2 B2 …).
func runs(steps []string) int {
	n := 0
	for i := 1; i < len(steps); i++ {
		if strings.TrimRight(steps[i], "0123456789") == strings.TrimRight(steps[i-1], "0123456789") {
			n++
		}
	}
	return n
}

// samePrefix checks that a decision seen again on another run is the one
// the node holds, transcript so far included.
func samePrefix(t *Tree, n *Node, d Decision, lines []Line) error {
	if !slices.EqualFunc(n.Sessions, d.Sessions, sameState) {
		return fmt.Errorf("the sessions' states differ (%v, %v)", n.Sessions, d.Sessions)
	}
	if n.Lines != d.Lines || len(lines) < d.Lines || !slices.Equal(t.Leaves[n.Below].Lines[:n.Lines], lines[:d.Lines]) {
		return fmt.Errorf("the transcripts so far differ")
	}
	if !reflect.DeepEqual(n.State, d.State) {
		return fmt.Errorf("the database differs (%+v, %+v)", n.State, d.State)
	}
	return nil
}

func sameState(a, b SessionState) bool {
	return a.Name == b.Name && a.State == b.State && a.Step == b.Step && a.Text == b.Text &&
		a.Answer == b.Answer && slices.Equal(a.WaitingOn, b.WaitingOn)
}

// goal words the level: what to make the variant do, or, when no schedule
// breaks it, why none can.
func goal(t *Tree) (goal, unbreakable string) {
	if t.Breaking > 0 {
		// The lesson of a race is the double credit: name it when some
		// schedule shows it.
		what := "break a guarantee"
		for _, l := range t.Leaves {
			if slices.ContainsFunc(l.Failures, func(f string) bool {
				return strings.HasPrefix(f, "balance of account") || strings.Contains(f, "moved by")
			}) {
				what = "credit twice"
				break
			}
		}
		return fmt.Sprintf("Make %s %s: find a schedule where %s fails (%d of %d schedules do).",
			t.Variant, what, t.Scenario, t.Breaking, len(t.Leaves)), ""
	}
	waits := map[string]bool{}
	for _, l := range t.Leaves {
		for _, line := range l.Lines {
			if line.Result == "<waiting>" {
				waits[line.Text] = true
			}
		}
	}
	goal = fmt.Sprintf("Try to make %s fail %s. (This level cannot be won.)", t.Variant, t.Scenario)
	if t.Mistake != "" {
		return goal, fmt.Sprintf("None of the %d schedules breaks %s in %s: its mistake (%s) is not a race; "+
			"the matrix shows the scenarios that catch it.", len(t.Leaves), t.Variant, t.Scenario, t.Mistake)
	}
	if len(waits) == 0 {
		return goal, fmt.Sprintf("None of the %d schedules breaks %s: whatever the order, one delivery applies and the other does not credit.", len(t.Leaves), t.Variant)
	}
	stmts := slices.Sorted(maps.Keys(waits))
	return goal, fmt.Sprintf("None of the %d schedules breaks %s. Whenever both deliveries are under way, one waits at %s "+
		"until the other's transaction ends: the inbox row and the credit are written under one write lock and committed together, "+
		"so there is no gap between the check and the act for a schedule to slip into. The second delivery then sees the first's row.",
		len(t.Leaves), t.Variant, strings.Join(stmts, " or "))
}

// Stepper is the file the scenario tests write for the race stepper
// (go test ./scenarios -run TestStepper -lab.stepper=FILE): every tree.
// The workshop's page and its terminal stepper walk them.
type Stepper struct {
	Trees []*Tree `json:"trees"`
}

// Tree returns the tree of a variant and a scenario, or nil.
func (s *Stepper) Tree(variant, scenario string) *Tree {
	for _, t := range s.Trees {
		if t.Variant == variant && t.Scenario == scenario {
			return t
		}
	}
	return nil
}

// Write stores the stepper file.
func (s *Stepper) Write(path string) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
