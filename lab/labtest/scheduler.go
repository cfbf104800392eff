package labtest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	"idemlab/lab"
	"idemlab/lab/report"
)

// The scheduler runs several deliveries at once and decides, one statement
// at a time, which of them goes next. It is what makes a race a schedule
// instead of luck.
//
// Every delivery runs on its own goroutine as a session. The hooking driver
// parks a session before each of its statements (BEGIN, SQL, COMMIT,
// ROLLBACK) until the scheduler releases it. After a release the scheduler
// calls synctest.Wait, which returns once every other goroutine of the bubble
// is durably blocked. By then the released session has either parked before
// its next statement, finished, or is waiting for the write lock that another
// session holds: there is nothing else it can be blocked on. That is how
// <waiting> is detected exactly, with no sleep and no grace period.
//
// A waiting session sits in SQLite's busy handler, which modernc implements
// with a Go timer whenever the call's context can be cancelled (deliver gives
// every delivery such a context). Inside a synctest bubble that timer runs on
// the bubble's fake clock, which moves only when the scheduler lets it (see
// advance). So after a step that may have released the lock — a COMMIT, a
// ROLLBACK, a statement outside a transaction — the scheduler moves the fake
// clock forward a millisecond at a time until a waiter has taken the lock, or
// until every waiter has retried and failed. Nothing real is waited for.
//
// Each release happens at its own instant of the fake clock, so waiters that
// started waiting at different steps retry at different instants, and the
// one that gets the lock is decided by the schedule, never by the Go runtime.
// Scheduled runs must therefore happen inside a synctest bubble; the scenario
// harness runs every scenario in one.

// maxBusyPoll is the longest SQLite's busy handler sleeps between two tries
// of a lock (the last entry of its retry schedule). After that much fake time
// every waiting session has tried the lock at least once.
const maxBusyPoll = 100 * time.Millisecond

// stuckAfter is how long, on the fake clock, waiting sessions may make no
// progress when nothing else can run before the scheduler gives up: twelve
// times the busy timeout the variants set, so only a session blocked on
// something other than the write lock reaches it. (Each millisecond of it
// is a step of the simulation; ten minutes took seconds of real time under
// the race detector.)
const stuckAfter = time.Minute

// goLockWait is the transcript's line for a session that waits outside the
// database, for a Go lock another delivery holds (see quiet.go).
const goLockWait = "waits for a Go lock another delivery holds"

// session is one goroutine of a scheduled run.
type session struct {
	name     string
	release  chan struct{}
	parkedAt *stmt // the statement it waits to run; nil while it runs
	waiting  bool  // released, but blocked on the write lock
	// blockedAt is the statement it waits in, while waiting.
	blockedAt *stmt
	pid       uint32 // PostgreSQL: the server process its last released statement ran on
	inTx      bool   // inside a transaction after its last finished statement
	ran       int    // the number of its last statement that has run
	atBetween bool   // held between two deliveries (see between)
	done      bool
}

type scheduler struct {
	db       *DB
	mu       sync.Mutex
	sessions []*session
	realtime bool // PostgreSQL: no bubble; waits are seen by asking the server
	// goLocked: when the bubble last was quiet, a goroutine of it waited
	// for a Go lock, so its clock cannot move (see quiet.go).
	goLocked bool
	watch    *bubbleWatch  // how the scheduler's goroutine sees its bubble quiet
	stepping *session      // the session step released, until step is done
	changed  chan struct{} // signalled when a session parks or finishes
	// PostgreSQL: closed once the step in flight has parked, finished or
	// been seen waiting. A waiting session that the step released logs its
	// result only then, so that the step that freed it (a COMMIT, say) is
	// logged first, as isolationtester prints it, in every run.
	stepped chan struct{}
}

// turn holds back the logging of session name's statement while it is one
// that waited and the step that released it is still in flight (see
// stepped). On SQLite the bubble already orders them.
func (sc *scheduler) turn(name string) {
	if !sc.realtime {
		return
	}
	s := sc.find(name)
	if s == nil {
		return
	}
	sc.mu.Lock()
	waiting, stepped := s.waiting, sc.stepped
	sc.mu.Unlock()
	if waiting && stepped != nil {
		<-stepped
	}
}

// signal wakes the scheduler if it polls for a session to park or finish.
func (sc *scheduler) signal() {
	select {
	case sc.changed <- struct{}{}:
	default:
	}
}

// park blocks the session of s until the scheduler releases it. Statements
// of sessions the scheduler does not run pass straight through.
func (sc *scheduler) park(s *stmt) {
	sess := sc.find(s.Session)
	if sess == nil {
		return
	}
	sc.mu.Lock()
	sess.parkedAt = s
	sc.mu.Unlock()
	sc.signal()
	<-sess.release
}

// finished records whether a session is inside a transaction after one of
// its statements, or after its transaction ended.
func (sc *scheduler) finished(name string, inTx bool) {
	if sess := sc.find(name); sess != nil {
		sc.mu.Lock()
		sess.inTx = inTx
		sc.mu.Unlock()
	}
}

// between holds session s between two of its deliveries, where the
// handler's Go locks are free, until the bubble is quiet (see quiesce): a
// delivery that a Go lock's release woke then has taken the lock, whichever
// goroutine the runtime would have let take it first. Without this, the
// session that let the lock go and goes on to its next delivery may take
// it back before the woken one runs, or not, as the Go runtime's timing
// decides (sync.Mutex is not fair), and a replayed schedule would not be
// the same schedule. Only a cell that schedules Go locks holds sessions so.
func (sc *scheduler) between(s *session) {
	if !sc.db.run.cell.goLocks {
		return
	}
	sc.mu.Lock()
	s.atBetween = true
	sc.mu.Unlock()
	<-s.release
}

// takeBetween returns the sessions held between deliveries, and lets them
// go from the scheduler's books.
func (sc *scheduler) takeBetween() []*session {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var held []*session
	for _, s := range sc.sessions {
		if s.atBetween {
			s.atBetween = false
			held = append(held, s)
		}
	}
	return held
}

// mayWaitForConn reports whether session s, running its statement st,
// may come to wait for database/sql's lock on a connection that another
// session holds (see heldInStatement): a wait synctest.Wait would never
// see end. s may hold a Result of the last Exec on a connection, and read
// it at any time: its RowsAffected waits while another session is parked
// in a statement on that connection, which it has either now (a session
// parked or waiting for the database's lock on a connection whose last
// Exec was s's), or may get when st's connection, its last Exec s's, goes
// back to the pool and is handed to a session waiting for a connection.
// sc.mu must be held.
func (sc *scheduler) mayWaitForConn(s *session, st *stmt) bool {
	owns := st.exec || st.connExec == s.name
	releases := st.Op == OpCommit || st.Op == OpRollback || (st.Op != OpBegin && !s.inTx)
	for _, o := range sc.sessions {
		if o == s || o.done {
			continue
		}
		held := o.parkedAt
		if held == nil && o.waiting && o.blockedAt != nil && o.ran < o.blockedAt.N {
			held = o.blockedAt // inside its statement, waiting for the database's lock
		}
		switch {
		case held != nil && held.connExec == s.name:
			return true
		case held == nil && o.waiting && !o.atBetween && owns && releases:
			return true // it waits outside the driver: for a connection, say
		}
	}
	return false
}

// ran records that statement s of its session has run: a session that
// is neither parked nor done after it waits outside the database.
func (sc *scheduler) ran(s *stmt) {
	if sess := sc.find(s.Session); sess != nil {
		sc.mu.Lock()
		sess.ran = s.N
		sc.mu.Unlock()
	}
}

func (sc *scheduler) find(name string) *session {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.sessions {
		if s.name == name {
			return s
		}
	}
	return nil
}

// Concurrently runs each list of events on a session of its own (A, B, …;
// a session delivers its events one after the other), all sessions at once,
// and steps them round robin: every session that can run takes one
// statement, then the next session does. So every delivery takes its first
// statement before any takes its second, and a session waiting for the lock
// counts as having taken its turn. It returns the answers in the order they
// were given. It must be called inside a synctest bubble.
func (db *DB) Concurrently(sessions ...[]lab.Event) []Answer {
	answers, _ := db.schedule(roundRobin, sessions)
	return answers
}

// Chooser decides which session takes the next step: given the decision's
// number (from 0), the sessions parked before a statement (never empty),
// and the one round robin would pick, it returns one of the parked ones.
type Chooser func(step int, parked []string, robin string) string

// Plan returns a Chooser that follows a named interleaving, such as
// "A1 B1 A2 B2", the way a hermitage script or PostgreSQL's isolation
// tester names one: each step is a session and its statement's number. The
// numbers are checked: a plan that names a step the session is not parked
// at, or a session that cannot run (it waits for the lock, or is done),
// panics with what was parked instead. Once the plan is used up the
// sessions go on round robin.
func Plan(steps string) Chooser {
	plan := strings.Fields(steps)
	var taken map[string]int // steps each session has taken so far
	return func(step int, parked []string, robin string) string {
		if step == 0 {
			taken = map[string]int{}
		}
		name := robin
		if step < len(plan) {
			name = strings.TrimRight(plan[step], "0123456789")
			if !slices.Contains(parked, name) {
				panic(fmt.Sprintf("lab: plan step %d is %s, but the sessions that can run are %v", step+1, plan[step], parked))
			}
			// Every statement takes exactly one decision, so the number a
			// plan gives must be the session's next one.
			if want := fmt.Sprintf("%s%d", name, taken[name]+1); plan[step] != want {
				panic(fmt.Sprintf("lab: plan step %d is %s, but session %s is parked at %s", step+1, plan[step], name, want))
			}
		}
		taken[name]++
		return name
	}
}

// roundRobin is the Chooser of Concurrently.
func roundRobin(_ int, _ []string, robin string) string { return robin }

// Interleave runs the sessions like Concurrently, but lets choose pick every
// step, for example from a property test's random draws. It returns the
// answers and the schedule it followed ("A1 B1 A2 …").
//
// Unlike Concurrently's, its answers are in the order of the sessions (the
// answers of the first list of events first), whoever finished first.
func (db *DB) Interleave(choose Chooser, sessions ...[]lab.Event) ([]Answer, string) {
	answers, decisions := db.schedule(choose, sessions)
	slices.SortStableFunc(answers, func(a, b Answer) int { return sessionIndex(a.Session) - sessionIndex(b.Session) })
	return answers, scheduleString(decisions)
}

// sessionIndex orders session names as nextSession makes them: A, B, …, Z,
// AA, AB, …
func sessionIndex(name string) int {
	n := 0
	for _, c := range name {
		n = n*26 + int(c-'A') + 1
	}
	return n
}

func scheduleString(decisions []decision) string {
	steps := make([]string, len(decisions))
	for i, d := range decisions {
		steps[i] = d.step
	}
	return strings.Join(steps, " ")
}

// decision is one choice the scheduler made: which of the sessions parked
// at that moment took the next step.
type decision struct {
	choices []string // the parked sessions, in session order
	chosen  string
	step    string // the step taken, e.g. "B2"
	// What a stepper shows before the choice (see TraceCell): every
	// session's state, and how many transcript lines were written.
	view  []report.SessionState
	lines int
}

// schedule runs the sessions, letting choose pick each step, and returns the
// answers and every decision made. Replaying the decisions of one run
// reproduces it exactly, which is what lets Interleavings enumerate them.
func (db *DB) schedule(choose Chooser, sessions [][]lab.Event) ([]Answer, []decision) {
	if db.pg != nil && !db.pg.untimed {
		db.run.tb.Fatalf("lab: scheduling deliveries on %s, opened with Open: the variant's lock_timeout would end "+
			"a scheduled wait in real time; open it with OpenScheduled", db.Path)
	}
	sc := &scheduler{db: db, realtime: db.pg != nil, changed: make(chan struct{}, 1)}
	db.mu.Lock()
	db.sched = sc
	first := len(db.answers)
	db.mu.Unlock()
	defer func() {
		db.mu.Lock()
		db.sched = nil
		db.mu.Unlock()
	}()

	for _, events := range sessions {
		s := &session{name: db.run.nextSession(), release: make(chan struct{}, 1)}
		sc.mu.Lock()
		sc.sessions = append(sc.sessions, s)
		sc.mu.Unlock()
		go func() {
			for i, e := range events {
				if i > 0 {
					sc.between(s)
				}
				db.deliver(s.name, e, 0)
			}
			sc.mu.Lock()
			s.done = true
			sc.mu.Unlock()
			sc.signal()
		}()
		// Let it reach its first statement before the next one starts, so
		// that even the "deliver" lines of the transcript are in a fixed
		// order.
		if sc.realtime {
			sc.awaitReal(s, 0)
		} else {
			sc.quiesce(false)
			// Neither parked before its first statement nor done: it
			// waits for a Go lock (see quiet.go).
			sc.mu.Lock()
			s.waiting = s.parkedAt == nil && !s.done
			sc.mu.Unlock()
			if s.waiting {
				db.run.Transcript.Note(s.name, goLockWait, "<waiting>")
			}
		}
	}
	defer func() {
		// A chooser that panics (a property test's draw that ends the test
		// case) must not leave sessions parked forever: finish them round
		// robin, then let the panic go on.
		if p := recover(); p != nil {
			sc.run(roundRobin)
			panic(p)
		}
	}()
	decisions := sc.run(choose)
	db.run.Transcript.Note("", "schedule: "+scheduleString(decisions), "")

	db.mu.Lock()
	defer db.mu.Unlock()
	return append([]Answer(nil), db.answers[first:]...), decisions
}

// run steps the sessions until all are done, each step the one choose
// picks.
func (sc *scheduler) run(choose Chooser) []decision {
	var decisions []decision
	next := 0
	for {
		parked := sc.parked()
		if len(parked) == 0 {
			if !sc.anyWaiting() {
				return decisions
			}
			if sc.realtime {
				sc.settleReal(true)
			} else {
				sc.settle(true) // only waiters are left: one of them must get the lock
			}
			continue
		}
		robin := sc.roundRobin(parked, next)
		name := choose(len(decisions), names(parked), robin.name)
		s := sc.find(name)
		if !slices.Contains(parked, s) {
			panic(fmt.Sprintf("lab: schedule step %d picks session %q, which cannot run; the sessions are %s\n"+
				"the decisions so far: %s\nthe transcript so far:\n%s",
				len(decisions)+1, name, sc.describe(), scheduleString(decisions), sc.db.run.Transcript.String()))
		}
		next = slices.Index(sc.sessions, s) + 1
		view, lines := sc.view(), sc.db.run.Transcript.Len()
		decisions = append(decisions, decision{choices: names(parked), chosen: s.name, step: sc.step(s), view: view, lines: lines})
	}
}

// parked returns the sessions parked before a statement, in session order.
func (sc *scheduler) parked() []*session {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []*session
	for _, s := range sc.sessions {
		if s.parkedAt != nil {
			out = append(out, s)
		}
	}
	return out
}

// roundRobin picks the first parked session at or after index from,
// cyclically.
func (sc *scheduler) roundRobin(parked []*session, from int) *session {
	for k := range len(sc.sessions) {
		s := sc.sessions[(from+k)%len(sc.sessions)]
		if slices.Contains(parked, s) {
			return s
		}
	}
	return parked[0]
}

// describe says what every session is doing, for a panic's message.
func (sc *scheduler) describe() string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var parts []string
	for _, s := range sc.sessions {
		state := "running"
		switch {
		case s.done:
			state = "done"
		case s.parkedAt != nil:
			state = "parked at " + s.parkedAt.label()
		case s.waiting:
			state = "waiting"
		}
		if s.pid != 0 {
			state += fmt.Sprintf(" (server process %d)", s.pid)
		}
		parts = append(parts, s.name+" "+state)
	}
	return strings.Join(parts, ", ")
}

func names(sessions []*session) []string {
	out := make([]string, len(sessions))
	for i, s := range sessions {
		out[i] = s.name
	}
	return out
}

func (sc *scheduler) anyWaiting() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.sessions {
		if s.waiting {
			return true
		}
	}
	return false
}

// step releases one parked session for one statement, waits until the
// bubble is quiet again, and returns the step's name ("B2": session B's
// second statement).
func (sc *scheduler) step(s *session) string {
	if !sc.realtime && !sc.goLocked {
		sc.advance(time.Microsecond) // each release at an instant of its own
	}
	sc.mu.Lock()
	st := s.parkedAt
	connRisk := sc.mayWaitForConn(s, st)
	s.parkedAt = nil
	s.pid = st.pid
	// A parked session waits for nothing but this release, whatever wait
	// it was last seen in: that one ended unseen (on PostgreSQL a session
	// can be seen waiting, get its lock and park between two looks). Left
	// set, the flag would make turn hold the session's own step forever.
	s.waiting = false
	sc.mu.Unlock()

	if sc.realtime {
		sc.mu.Lock()
		sc.stepped = make(chan struct{})
		sc.mu.Unlock()
	}
	sc.stepping = s
	defer func() { sc.stepping = nil }()
	s.release <- struct{}{}
	if sc.realtime {
		// Most statements end within a poll interval: the server is asked
		// whether this one waits only once it has had that long to park
		// or finish (awaitReal), not while it is on its way there. In a
		// run of TestMariaDB, 107,000 steps, the server was asked 164,000
		// times without the pause, 64,000 times with it.
		sc.pause()
		waits := sc.awaitReal(s, st.pid)
		sc.mu.Lock()
		s.waiting = waits
		s.blockedAt = st
		close(sc.stepped)
		sc.stepped = nil
		sc.mu.Unlock()
		if waits {
			sc.db.run.Transcript.stepNote(st, "<waiting>")
			if sc.waitsClosed() {
				// It may have closed a deadlock that the server has not
				// ended yet: wait until it has (settleReal).
				sc.settleReal(false)
			}
		} else {
			// Any step may have released a lock (an error inside a
			// transaction does not, its ROLLBACK does): look at every
			// waiter again.
			sc.settleReal(false)
		}
		return fmt.Sprintf("%s%d", s.name, st.N)
	}
	sc.quiesce(connRisk)

	sc.mu.Lock()
	s.waiting = s.parkedAt == nil && !s.done
	s.blockedAt = st
	freed := !s.waiting && !s.inTx
	past := s.ran == st.N // its statement has run: it waits after it
	sc.mu.Unlock()
	switch {
	case s.waiting && past:
		sc.db.run.Transcript.Note(s.name, goLockWait, "<waiting>")
	case s.waiting:
		sc.db.run.Transcript.stepNote(st, "<waiting>")
	}
	if freed {
		sc.settle(false)
	}
	return fmt.Sprintf("%s%d", s.name, st.N)
}

// settle moves the fake clock so that sessions waiting for the write lock
// try it again. It returns once a waiter has taken the lock and holds it, or
// when every waiter has tried and failed (unless untilProgress, used when
// nothing but waiters is left: then one of them must get the lock, or run
// out of its busy timeout and fail, which is progress too).
func (sc *scheduler) settle(untilProgress bool) {
	var quiet time.Duration
	for sc.anyWaiting() {
		if sc.goLocked {
			// A delivery waits for a Go lock: only a step can free it, and
			// the clock cannot move (see quiet.go).
			if !untilProgress {
				return
			}
			// No session of the cell can take a step, and nothing outside
			// the cell holds the lock for a while: cells of such handlers
			// run one at a time and never beside a probe (golock.go). So
			// the holder will never let it go (a delivery the scenario
			// holds, or one that never unlocks).
			panic(blockedOutside(fmt.Sprintf("sessions %v wait, some for a Go lock (a sync.Mutex), and no session can take "+
				"a step that would free it", sc.waitingNames())))
		}
		// A millisecond at a time, so that the first waiter to take the
		// lock is seen before the others run out of their busy timeout.
		// Once every waiter has tried and failed (untilProgress: nothing
		// is left that the scheduler could step), the scheduler that
		// looks at the bubble through stack dumps (quiet.go) moves a
		// second at a time: a look per millisecond would take seconds of
		// real time to reach stuckAfter, and between its looks the bubble
		// still runs every wake-up in order of the clock.
		tick := time.Millisecond
		if sc.db.run.cell.goLocks && quiet > maxBusyPoll {
			tick = time.Second
		}
		sc.advance(tick)
		progressed, holds := sc.resumed()
		switch {
		case holds:
			return
		case progressed:
			quiet = 0
		default:
			quiet += tick
			if !untilProgress && quiet > maxBusyPoll {
				return
			}
			if quiet > stuckAfter {
				panic(blockedOutside(fmt.Sprintf("sessions %v have made no progress for %v of fake time, and no session holds a step: "+
					"they are blocked on something other than SQLite's write lock (a second connection from a pool of one?)",
					sc.waitingNames(), stuckAfter)))
			}
		}
	}
}

// waitingNames lists the sessions waiting for the lock.
func (sc *scheduler) waitingNames() []string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []string
	for _, s := range sc.sessions {
		if s.waiting {
			out = append(out, s.name)
		}
	}
	return out
}

// resumed finds waiting sessions that got past their wait: they parked
// before their next statement or finished. holds reports whether one of them
// is inside a transaction now, and so may hold the lock.
func (sc *scheduler) resumed() (progressed, holds bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.sessions {
		if s.waiting && (s.parkedAt != nil || s.done) {
			s.waiting = false
			progressed = true
			holds = holds || s.inTx
		}
	}
	return progressed, holds
}

// advance moves the bubble's fake clock forward by d and waits until every
// goroutine that woke up is blocked again. Inside a synctest bubble
// time.Sleep does not wait for real time: the clock jumps to the next timer
// as soon as every goroutine is blocked, so this is a deterministic step of
// the simulation, not a delay.
func (sc *scheduler) advance(d time.Duration) {
	time.Sleep(d)
	sc.quiesce(false)
}

// quiesce waits until the bubble is quiet (see quiet.go) and records
// whether a goroutine of it waits for a Go lock. It reads the bubble from
// stack dumps in a cell that schedules Go locks, while a goroutine waits
// for one, and when connRisk says that a delivery may come to wait for a
// connection's lock (see mayWaitForConn); else synctest.Wait, much
// cheaper, tells it.
func (sc *scheduler) quiesce(connRisk bool) {
	cell := sc.db.run.cell
	if !cell.goLocks && !connRisk && !sc.goLocked {
		synctest.Wait()
		return
	}
	if sc.watch == nil {
		sc.watch = newBubbleWatch(cell)
	}
	locked := sc.watch.quiesce(sc.changed)
	// Sessions held between two deliveries go on only now, after the
	// deliveries a released Go lock woke have taken it (see between).
	for held := sc.takeBetween(); len(held) > 0; held = sc.takeBetween() {
		for _, s := range held {
			s.release <- struct{}{}
		}
		locked = sc.watch.quiesce(sc.changed)
		for _, s := range held {
			sc.mu.Lock()
			waits := s.parkedAt == nil && !s.done && !s.atBetween
			s.waiting = s.waiting || waits
			sc.mu.Unlock()
			if waits && s != sc.stepping { // step notes its own session's wait
				sc.db.run.Transcript.Note(s.name, goLockWait, "<waiting>")
			}
		}
	}
	if locked {
		cell.lockSeen()
	}
	sc.mu.Lock()
	sc.goLocked = locked
	sc.mu.Unlock()
}
