package labtest

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// A cell stops early when it cannot go on: the handler panicked, the lab
// itself panicked, or every goroutine of the cell is blocked. A stopped
// cell is a verdict with its reason and the transcript so far; the cells
// after it are still run and judged. Nothing of a stopped cell may keep
// running into the next one, so stopping also ends every delivery still in
// flight: each is released from where the scheduler parked it, and every
// statement it tries from then on fails with errStopped.

// errStopped is what a delivery's handler gets from every call once its
// cell has stopped.
var errStopped = errors.New("lab: the cell was stopped")

// errLooping is what a handler gets from every statement of a session past
// sessionStepLimit.
var errLooping = fmt.Errorf("lab: the session ran %d statements without its delivery ending, and runs no more", sessionStepLimit)

// cellState is what the runs of one cell share: the root run and every
// child of it (a case, an interleaving, a property test case).
type cellState struct {
	bubble  string // the synctest bubble the cell runs in, as bubbleOf names it (inBubble)
	mu      sync.Mutex
	dbs     []*DB // every database the cell opened
	stopped bool
	steps   int // statements the cell's deliveries have reached so far
	// goLocks: the scheduler tells a quiet bubble from stack dumps, so that
	// deliveries may wait for each other on Go locks (see golock.go).
	goLocks bool
	// sawGoLock: a delivery of the cell was seen waiting for a Go lock.
	sawGoLock bool
	// abandoned: the watchdog gave the cell up; nothing of it may go on
	// using the machine.
	abandoned bool
	// looping says which session ran more than sessionStepLimit
	// statements: the watchdog stops the cell for it.
	looping string
}

// sessionStepLimit is how many statements one session of a cell may run.
// The kit's scenarios run at most a few dozen in any session (56, in
// Concurrent's busiest, measured over every scenario, check and search);
// a handler that runs a thousand without answering retries without end
// (on a context its caller cancelled, say, which every statement refuses
// at once). It never blocks, so nothing else tells it from a cell at
// work; and a scheduled step costs milliseconds, so the limit is no higher
// than it must be.
const sessionStepLimit = 1_000

// loops records that session ran more than sessionStepLimit statements.
func (c *cellState) loops(session string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.looping == "" {
		c.looping = fmt.Sprintf("session %s ran %d statements without its delivery ending: the handler runs them in a loop "+
			"(a retry without a bound, on a context its caller has cancelled?)", session, sessionStepLimit)
	}
}

// loopReason returns why the cell loops, "" if it does not.
func (c *cellState) loopReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.looping
}

// enter records that the calling goroutine's bubble is the cell's.
func (c *cellState) enter() {
	b := bubbleOf()
	c.mu.Lock()
	c.bubble = b
	c.mu.Unlock()
}

// inBubble returns the cell's bubble, as bubbleOf names it ("" before the
// cell has entered it).
func (c *cellState) inBubble() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bubble
}

// lockSeen records that a delivery waited for a Go lock.
func (c *cellState) lockSeen() {
	c.mu.Lock()
	c.sawGoLock = true
	c.mu.Unlock()
}

// lockWasSeen reports whether a delivery was seen waiting for a Go lock.
func (c *cellState) lockWasSeen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sawGoLock
}

// abandon marks the cell given up by the watchdog.
func (c *cellState) abandon() {
	c.mu.Lock()
	c.abandoned = true
	c.mu.Unlock()
}

// isAbandoned reports whether the watchdog gave the cell up.
func (c *cellState) isAbandoned() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.abandoned
}

// step counts a statement a delivery reached: the watchdog's sign of life.
func (c *cellState) step() {
	c.mu.Lock()
	c.steps++
	c.mu.Unlock()
}

// progress returns the statements reached so far.
func (c *cellState) progress() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.steps
}

// register records a database of the cell, so that stop can reach it.
func (c *cellState) register(db *DB) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dbs = append(c.dbs, db)
}

// stop ends every delivery of the cell that is still in flight.
func (c *cellState) stop() {
	c.mu.Lock()
	c.stopped = true
	dbs := slices.Clone(c.dbs)
	c.mu.Unlock()
	for _, db := range dbs {
		db.stop()
	}
}

// isStopped reports whether the cell has stopped.
func (c *cellState) isStopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// stop releases every session of db that waits for the lab, and makes the
// lab stop waiting for db's transactions to end.
func (db *DB) stop() {
	db.mu.Lock()
	sc := db.sched
	db.txEnded.Broadcast()
	db.mu.Unlock()
	if sc != nil {
		sc.releaseAll()
	}
}

// releaseAll releases every parked session, for a cell that has stopped.
func (sc *scheduler) releaseAll() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.sessions {
		if s.parkedAt != nil {
			s.parkedAt = nil
			select {
			case s.release <- struct{}{}:
			default:
			}
		}
	}
}

// blockedOutside is the scheduler's panic when deliveries wait on
// something other than the database, so that nothing it can step will ever
// move them: a verdict on the handler, not a fault of the lab.
type blockedOutside string

// bubbleOf returns the synctest bubble of the calling goroutine, as a stack
// dump names it ("synctest bubble 3"), or "" outside one.
func bubbleOf() string {
	buf := make([]byte, 256)
	header, _, _ := strings.Cut(string(buf[:runtime.Stack(buf, false)]), "\n")
	if m := goroutineHeader.FindStringSubmatch(header); m != nil {
		_, bubble := goroutineState(m[2])
		return bubble
	}
	return ""
}

// handlerPanic is a panic of the handler's own code, recovered by the lab
// so that one broken delivery does not end the test binary.
type handlerPanic struct {
	value any
	where string // the handler's frame that panicked: "naive/x/process.go:42"
}

func (p handlerPanic) Error() string {
	if p.where == "" {
		return fmt.Sprintf("panic: %v", p.value)
	}
	return fmt.Sprintf("panic: %v (at %s)", p.value, p.where)
}

// shortPath names a source line relative to the module root when it is in
// the module, by its base name otherwise.
func shortPath(file string, line int) string {
	if rel, ok := strings.CutPrefix(file, moduleRoot+"/"); ok {
		return fmt.Sprintf("%s:%d", rel, line)
	}
	return fmt.Sprintf("%s:%d", file[strings.LastIndex(file, "/")+1:], line)
}

// goroutineHeader matches the first line of a goroutine in a full stack
// dump: "goroutine 810 [sync.Cond.Wait (durable), synctest bubble 5]:".
var goroutineHeader = regexp.MustCompile(`^goroutine (\d+) \[([^\]]*)\]:$`)

// goroutineState reads the state that a goroutine's header in a stack dump
// gives between its brackets, "chan receive (durable), 1 minutes, locked to
// thread, synctest bubble 5", as what it does ("chan receive (durable)",
// "sync.Mutex.Lock", "running") and its bubble ("synctest bubble 5", "" for
// none). The runtime writes more between the two: how long the goroutine
// has waited, in whole minutes of real time (inside a bubble too), once
// that is one or more ("1 minutes"); "locked to thread"; and, while the
// garbage collector scans its stack, "(scan)" before "(durable)". After the
// bubble, with GODEBUG=tracebacklabels=1, come its pprof labels. None of
// them says what it waits for, and none is in wait. (No wait reason of the
// runtime holds a ", ".)
func goroutineState(status string) (wait, bubble string) {
	status, _, _ = strings.Cut(status, " labels:{")
	fields := strings.Split(status, ", ")
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "synctest bubble ") {
			bubble = f
		}
	}
	return strings.Replace(fields[0], " (scan)", "", 1), bubble
}

// blockedGoroutine is one goroutine of a stack dump: why it waits, and the
// first frame of the module's own code on its stack.
type blockedGoroutine struct {
	id, wait, bubble, frame string
	// handler is the innermost frame of the module's code outside the
	// engine ("" if none): where the handler's own code waits, or called
	// the statement the lab parked it before.
	handler string
}

// moduleGoroutines parses a full stack dump (runtime.Stack with all set)
// into the goroutines that run the module's code, each with its wait and
// the innermost frame of the module's code, handlers first (frames outside
// the engine), the engine's after.
func moduleGoroutines(dump string) []blockedGoroutine {
	var out []blockedGoroutine
	for _, g := range strings.Split(dump, "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		m := goroutineHeader.FindStringSubmatch(lines[0])
		if m == nil {
			continue
		}
		wait, bubble := goroutineState(m[2])
		bg := blockedGoroutine{id: m[1], wait: wait, bubble: bubble}
		for i := 1; i+1 < len(lines); i += 2 {
			fn := lines[i]
			if paren := strings.LastIndex(fn, "("); paren > 0 {
				fn = fn[:paren]
			}
			if !strings.HasPrefix(packagePath(fn), modulePath+"/") {
				continue
			}
			loc := strings.TrimSpace(lines[i+1])
			if sp := strings.LastIndex(loc, " +0x"); sp > 0 {
				loc = loc[:sp]
			}
			file, line, _ := strings.Cut(loc, ":")
			var n int
			fmt.Sscan(line, &n)
			frame := fn + " at " + shortPath(file, n)
			if bg.frame == "" {
				bg.frame = frame
			}
			if packagePath(fn) != enginePackage {
				bg.handler = frame
				break
			}
		}
		if bg.frame != "" {
			out = append(out, bg)
		}
	}
	slices.SortStableFunc(out, func(a, b blockedGoroutine) int {
		return boolInt(strings.Contains(a.frame, enginePackage+".")) - boolInt(strings.Contains(b.frame, enginePackage+"."))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// describeBlocked says, in a few lines, where the goroutines of bubble
// (as bubbleOf names it) wait, the handler's first, each at the line of the
// handler's own code it waits in (or, for a delivery the lab parked, the
// line whose statement it was parked before): what a stuck cell reports.
// The engine's own waits (the scheduler in synctest.Wait, the bubble's
// root) say nothing about the handler and are left out. Lines end with ';'
// so that a report that reflows them still reads as a list.
func describeBlocked(dump, bubble string, limit int) string {
	var lines []string
	for _, g := range moduleGoroutines(dump) {
		if bubble == "" || g.bubble != bubble || strings.HasPrefix(g.wait, "synctest.") || g.wait == "running" || g.wait == "runnable" {
			continue
		}
		var line string
		switch {
		case g.handler == "":
			continue // the lab's own
		case strings.Contains(g.frame, ".(*scheduler).park "):
			line = "a delivery the lab parked before a statement of " + g.handler
		default:
			line = fmt.Sprintf("a goroutine waits (%s) in %s", g.wait, g.handler)
		}
		if len(lines) == limit {
			lines = append(lines, "…")
			break
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return "no goroutine of the handler's was found waiting"
	}
	return strings.Join(lines, ";\n")
}

// goLockWaits are the waits of a goroutine blocked on a Go lock, which a
// synctest bubble does not count as durable.
var goLockWaits = []string{"sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock"}

// goLockWedge reports whether, in a stack dump, bubble is wedged on Go
// locks: some of its goroutines wait for a sync.Mutex or RWMutex, and every
// other one is durably blocked (so none of them will ever unlock it). Such
// a bubble never becomes quiet, and synctest.Wait inside it never returns.
// inStatement reports whether every such wait is in database/sql's code, for
// a lock that a statement the lab has parked holds (see heldInStatement).
func goLockWedge(dump, bubble string) (wedged, inStatement bool) {
	if bubble == "" {
		return false, false
	}
	locks, inStatement := 0, true
	for _, g := range strings.Split(dump, "\n\n") {
		header, _, _ := strings.Cut(strings.TrimSpace(g), "\n")
		m := goroutineHeader.FindStringSubmatch(header)
		if m == nil {
			continue
		}
		wait, in := goroutineState(m[2])
		if in != bubble {
			continue
		}
		switch {
		case slices.Contains(goLockWaits, wait):
			locks++
			inStatement = inStatement && heldInStatement(g)
		case strings.HasSuffix(wait, "(durable)"):
		default:
			return false, false // running, runnable, or waiting on something that may end by itself
		}
	}
	return locks > 0, locks > 0 && inStatement
}

// allStacks returns a full stack dump of every goroutine.
func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
