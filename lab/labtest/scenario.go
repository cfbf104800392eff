package labtest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/lab"
	"idemlab/lab/report"
)

// Scenario is one column of the verdict matrix: a story told identically to
// every variant.
type Scenario struct {
	// Name is the scenario's test name: TestScenarios/<Name>/<variant>.
	Name string
	// Short is its column heading in the matrix, at most five letters.
	Short string
	// Shows is what a passing run demonstrates, in one line.
	Shows string
	// Claims are the article's claims it demonstrates, as CLAIMS.md numbers them.
	Claims string
	// Limit, when set, marks a limit of the pattern: a guarantee that the
	// inbox alone cannot give, which the correct variant fails by design.
	// It names the exercise that lifts the limit. The matrix marks such a
	// column with a * and never holds a variant to it, even in strict mode.
	Limit string
	// Run tells the story. It reports broken guarantees with r.Errorf; the
	// harness checks the invariants afterwards (Run.Close).
	Run func(r *Run)
}

// RunCell runs scenario sc against variant v in a synctest bubble — where
// the scheduler can tell a session waiting for a lock from one that is
// parked, and where lock timeouts take no real time — and returns the
// verdict with its evidence. Failures of v are in the cell, not on t; t
// fails only if the lab itself cannot work.
//
// A cell that cannot go on is stopped, not the test binary: a panic (of
// the handler, which Deliver turns into a failed delivery, or of the lab),
// or every goroutine of the cell blocked for good, is a failed cell whose
// detail says what happened, with the transcript so far, and the cells
// after it are still run (see stop.go). Deliveries that wait for each
// other on a Go lock of the handler's own (a process-wide sync.Mutex) are
// scheduled as deliveries waiting for the database's lock are (see
// golock.go).
func RunCell(t *testing.T, sc Scenario, v lab.Variant) *report.Cell {
	return cell(t, sc, v, false)
}

// TraceCell is RunCell with every interleaving's trace recorded: the state
// of each session at each decision of the scheduler and the transcript as
// lines. It is what a stepper is built from (package workshop); the matrix
// does without, since traces make a report several times larger.
func TraceCell(t *testing.T, sc Scenario, v lab.Variant) *report.Cell {
	return cell(t, sc, v, true)
}

// cell is RunCell, recording traces when trace is set (TraceCell).
func cell(t *testing.T, sc Scenario, v lab.Variant, trace bool) *report.Cell {
	goLocks := waitsOnGoLocks(t, v)
	if goLocks {
		goLockCells.Lock()
		defer goLockCells.Unlock()
	}
	return runCell(t, sc, v, &cellState{goLocks: goLocks}, trace)
}

// runCell is cell on the cell cs, new and empty but for how its scheduler
// tells a quiet bubble (goLocks, see golock.go).
func runCell(t *testing.T, sc Scenario, v lab.Variant, cs *cellState, trace bool) *report.Cell {
	var (
		mu   sync.Mutex
		r    *Run
		cell *report.Cell
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			// synctest.Test panics here when every goroutine of the bubble
			// is blocked and none can be woken: the cell is stuck for good.
			// Its goroutines stay blocked; they hold nothing the next cell
			// needs.
			if p := recover(); p != nil {
				mu.Lock()
				defer mu.Unlock()
				if cell == nil { // else the cell has stopped already, and says why
					cell = stoppedCell(r, fmt.Sprintf("every goroutine of the cell is blocked for good (%v):\n%s", p, describeBlocked(allStacks(), cs.inBubble(), 6)))
				}
			}
		}()
		synctest.Test(t, func(t *testing.T) {
			run := NewRun(t, v)
			cs.enter()
			run.cell, run.trace = cs, trace
			mu.Lock()
			r = run
			mu.Unlock()
			defer func() {
				if p := recover(); p != nil {
					why := fmt.Sprintf("the lab panicked: %v (at %s)", p, moduleFrame())
					if f, ok := p.(setupFailed); ok {
						why = string(f) // the variant's DSN or schema, not the lab
					}
					if b, ok := p.(blockedOutside); ok {
						why = fmt.Sprintf("the deliveries are blocked outside the database, where the lab cannot see or schedule them: %s:\n%s",
							string(b), describeBlocked(allStacks(), cs.inBubble(), 6))
					}
					mu.Lock()
					cell = stoppedCell(run, why)
					mu.Unlock()
					run.cell.stop()
				}
			}()
			sc.Run(run)
			run.Close()
			mu.Lock()
			defer mu.Unlock()
			if why := cs.loopReason(); why != "" {
				// The deliveries ended, on errLooping, before the
				// watchdog looked: the loop is the verdict all the same.
				cell = stoppedCell(run, why)
				return
			}
			cell = run.verdict("")
		})
	}()
	// A goroutine blocked on something the bubble does not count as
	// durable (a sync.Mutex, a real-time wait) keeps synctest from ever
	// seeing the cell stuck: the watchdog sees it instead. A delivery that
	// waits for a Go lock which a parked delivery holds is seen at once,
	// from the goroutines' own waits; anything else, as statements that
	// stop coming in real time.
	last, lastAt, wedged := cs.progress(), time.Now(), 0
	tick := time.NewTicker(stuckPoll)
	defer tick.Stop()
	for {
		select {
		case <-done:
			mu.Lock()
			defer mu.Unlock()
			return cell
		case now := <-tick.C:
			why := cs.loopReason()
			if n := cs.progress(); n != last && why == "" {
				last, lastAt, wedged = n, now, 0
				continue
			}
			if why == "" && now.Sub(lastAt) >= 2*stuckPoll {
				dump := allStacks()
				if locked, inStatement := goLockWedge(dump, cs.inBubble()); locked {
					if wedged++; wedged == wedgeSeen {
						why = "a delivery waits for a Go lock (a sync.Mutex) that a delivery the lab has parked between two " +
							"statements holds, on a path the lab's probe of the handler did not take, so the lab scheduled it as " +
							"deliveries that never wait on each other outside the database:\n"
						if inStatement {
							// A wait the scheduler looks for only at its own
							// steps (mayWaitForConn), begun while it moved the
							// clock: the lab's limit, not the handler's lock.
							why = "a delivery waits for database/sql's lock on a connection that a statement the lab has parked " +
								"holds, a wait that began where the lab's scheduler does not look for one (while it moved the clock):\n"
						}
						why += describeBlocked(dump, cs.inBubble(), 6)
					}
				} else {
					wedged = 0
				}
			}
			if why == "" && now.Sub(lastAt) >= cellStuckAfter {
				why = fmt.Sprintf("no statement ran for %v of real time; the deliveries are blocked outside the database, "+
					"where the lab cannot see or schedule them:\n%s", cellStuckAfter, describeBlocked(allStacks(), cs.inBubble(), 6))
			}
			if why == "" {
				continue
			}
			mu.Lock()
			defer mu.Unlock()
			if cell != nil {
				return cell
			}
			// The cell's goroutines are left where they are: they cannot be
			// woken from outside their bubble.
			cs.abandon()
			return stoppedCell(r, why)
		}
	}
}

// cellStuckAfter is how long, in real time, a cell may run no statement before
// the lab stops it as blocked outside the database. A statement takes
// milliseconds even under the race detector; a handler that waits on a Go
// lock or channel that a parked delivery holds never runs another. (A
// variable only so that the engine's own tests can wait less.)
var cellStuckAfter = 10 * time.Second

// stuckPoll is how often the watchdog looks.
const stuckPoll = 50 * time.Millisecond

// wedgeSeen is how many looks in a row must find the same deliveries
// waiting on Go locks, and nothing else moving, before the watchdog calls
// the cell wedged.
const wedgeSeen = 4

// stoppedCell is the verdict of a cell that could not go on: every
// failure found before it stopped, then why it stopped, with the
// transcript so far.
func stoppedCell(r *Run, why string) *report.Cell {
	msg := "the cell stopped: " + why
	if r == nil {
		return &report.Cell{Detail: msg, Failures: []string{msg}, Where: []string{""}, ByLab: []bool{true}}
	}
	r.Transcript.Note("", "STOPPED: "+strings.SplitN(why, "\n", 2)[0], "")
	return r.verdict(msg)
}

// verdict is the cell r's run gives. stopped, if set, is why the cell
// stopped before its end: a failure of its own, after those found.
func (r *Run) verdict(stopped string) *report.Cell {
	c := &report.Cell{
		Pass:         !r.Failed(),
		Neutral:      r.neutralReason(),
		Detail:       r.detail(),
		Lines:        r.Transcript.Lines(),
		Transcript:   r.Transcript.String(),
		Permutations: r.Permutations,
	}
	c.Failures, c.Where, c.ByLab = r.failureLists()
	if stopped != "" {
		c.Pass, c.Neutral = false, ""
		c.Failures, c.Where, c.ByLab = append(c.Failures, stopped), append(c.Where, ""), append(c.ByLab, true)
		c.Detail = c.Failures[0]
	}
	return c
}

// NewReport returns an empty report whose columns are scenarios and whose
// rows are variants.
func NewReport(scenarios []Scenario, variants []lab.Variant) *report.Report {
	var cols []report.ScenarioInfo
	for _, s := range scenarios {
		cols = append(cols, s.Info())
	}
	var rows []report.VariantResults
	for _, v := range variants {
		rows = append(rows, report.VariantResults{Name: v.Name, Mistake: v.Mistake})
	}
	return report.New(cols, rows)
}

// Info is what the report says of s.
func (s Scenario) Info() report.ScenarioInfo {
	return report.ScenarioInfo{Name: s.Name, Short: s.Short, Shows: s.Shows, Claims: s.Claims, Limit: s.Limit}
}
