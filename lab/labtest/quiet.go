package labtest

import (
	"runtime"
	"slices"
	"strings"
	"testing/synctest"
	"time"
)

// A handler may make its deliveries wait for each other outside the
// database: behind a process-wide sync.Mutex, say, which serialises them
// as a single process would. The scheduler parks deliveries between
// statements, so a delivery parked while it holds such a lock keeps every
// other delivery waiting for it, exactly as a delivery waiting for the
// database's lock would wait. But a synctest bubble does not count a
// goroutine waiting for a sync.Mutex as durably blocked: synctest.Wait
// would never return, and the bubble's clock would never move.
//
// So for a handler that does this (golock.go finds out which), the
// scheduler does not call synctest.Wait: it calls quiesce, which waits for
// the same moment — every other goroutine of the bubble blocked — but
// counts a goroutine waiting for a Go lock in the handler's own code as
// blocked too, by reading the goroutines' own waits from stack dumps. A
// delivery that waits for such a lock is then a waiting session like one
// that waits for the write lock: the scheduler steps the others, and the
// one holding the lock finishes and lets it go. Only the clock cannot move
// while a goroutine waits for a Go lock (time.Sleep in the bubble would
// never return), so the scheduler moves it only when none does.

// A bubbleWatch tells, from stack dumps, when the goroutines of one
// synctest bubble are all blocked. A dump names a goroutine's bubble only
// while it belongs to it, and the runtime takes a goroutine out of its
// bubble while it helps the garbage collector: a runnable goroutine of the
// bubble may show no bubble at all. So the watch remembers every goroutine
// it has seen in the bubble, and counts as the bubble's also one started by
// a goroutine of it ("created by … in goroutine N"); it remembers those it
// has seen waiting outside it too, and a running goroutine it knows
// neither way keeps it looking.
type bubbleWatch struct {
	self, bubble string
	ours, others map[string]bool
	cell         *cellState
	buf          []byte
}

// newBubbleWatch returns a watch of the calling goroutine's bubble, which
// it leaves out of every look (it is the one looking); bubble is "" outside
// one.
func newBubbleWatch(cell *cellState) *bubbleWatch {
	self, bubble := selfAndBubble()
	return &bubbleWatch{self: self, bubble: bubble, ours: map[string]bool{self: true}, others: map[string]bool{}, cell: cell, buf: make([]byte, 64<<10)}
}

// quiesce returns once every goroutine of the bubble, but the caller, is
// blocked: durably, as synctest.Wait counts it, or waiting for a sync.Mutex
// or RWMutex. It reports whether any of them waits for a Go lock. changed,
// signalled when a session parks or finishes, says when a look is most
// likely to find the bubble quiet; it is only a hint, the dump decides.
func (w *bubbleWatch) quiesce(changed chan struct{}) (goLocked bool) {
	if w.bubble == "" {
		synctest.Wait() // outside a bubble it panics, with synctest's own message
		return false
	}
	yields := 16
	for looks := 0; ; looks++ {
		// Let the bubble run until a session signals or the yields run
		// out, then look. Each look stops the world to dump every
		// goroutine of the test binary, so looks are spaced out, further
		// the longer the bubble stays busy; past a while the bubble is
		// doing work that takes real time (a statement, a page write), and
		// the caller pauses instead of yielding. The pauses wait for
		// nothing in particular: the condition is always read from a dump.
		for range yields {
			select {
			case <-changed:
			default:
				if looks < 8 {
					runtime.Gosched()
				} else {
					realPause(50 * time.Microsecond)
				}
				continue
			}
			break
		}
		if quiet, locked, stray := w.quietIn(w.dump()); stray {
			// A delivery waits for a lock of the handler's own on a path
			// the probe did not take (golock.go): the scheduler waits here
			// as it would in synctest.Wait, where the watchdog sees the
			// cell wedged and says so (RunCell).
			select {}
		} else if quiet {
			return locked
		}
		yields = min(2*yields, 256)
		if looks%64 == 63 && w.cell.isAbandoned() {
			select {} // the cell's other goroutines are left where they are too
		}
	}
}

// dump returns a full stack dump of every goroutine, in a buffer the watch
// keeps from one look to the next.
func (w *bubbleWatch) dump() string {
	for {
		n := runtime.Stack(w.buf, true)
		if n < len(w.buf) {
			return string(w.buf[:n])
		}
		w.buf = make([]byte, 2*len(w.buf))
	}
}

// quietIn reports whether, in a full stack dump, every goroutine of the
// bubble but the caller is blocked (durably, or on a Go lock), and whether
// any waits for a Go lock. A wait for a lock of the handler's own counts
// only in a cell that schedules such waits (cellState.goLocks); in another
// it is stray: the bubble is quiet, but no step of the scheduler is meant
// to free it.
func (w *bubbleWatch) quietIn(dump string) (quiet, goLocked, stray bool) {
	quiet = true
	for _, g := range strings.Split(dump, "\n\n") {
		g = strings.TrimSpace(g)
		header, _, _ := strings.Cut(g, "\n")
		m := goroutineHeader.FindStringSubmatch(header)
		if m == nil || m[1] == w.self {
			continue
		}
		id := m[1]
		wait, bubble := goroutineState(m[2])
		running := wait == "running" || wait == "runnable"
		switch {
		case bubble == w.bubble:
			w.ours[id] = true
		case bubble != "":
			// Marked as another bubble's, running or not: another cell's,
			// or one the watchdog gave up, whose handler may spin for good
			// (a retry without end on a cancelled context never reaches a
			// statement). Seen running later, with no mark, it is known.
			w.others[id] = true
			continue
		case w.ours[id] || w.ours[creator(g)]:
			w.ours[id] = true
		case !running || w.others[id]:
			// Waiting with no mark of this bubble: another bubble's, or
			// none's (a waiting goroutine always shows its bubble).
			w.others[id] = true
			continue
		default:
			// Running, never seen waiting, started by a goroutine the watch
			// does not know: it may be this bubble's, helping the garbage
			// collector. Look again later.
			quiet = false
			continue
		}
		switch {
		case slices.Contains(goLockWaits, wait) && heldInStatement(g):
			goLocked = true
		case slices.Contains(goLockWaits, wait) && handlerLock(g):
			if w.cell.goLocks {
				goLocked = true
			} else {
				stray = true
			}
		case strings.HasSuffix(wait, "(durable)"):
		default:
			quiet = false // running, runnable, or waiting on something that may end by itself
		}
	}
	return quiet, goLocked && quiet, stray && quiet
}

// heldInStatement reports whether g, one goroutine of a stack dump that
// waits for a Go lock, waits in database/sql's own code: for the lock of a
// pooled connection (driverConn), which database/sql holds around every
// call into the driver, or for one of the locks it holds while such a call
// runs (a Tx's or Rows' closemu). A handler's Result keeps its connection's
// lock: its RowsAffected and LastInsertId take it, after the connection
// has gone back to the pool, where another delivery may have taken it and
// be parked by the lab before its next statement, inside database/sql's
// call into the driver. Such a wait ends when that statement has run, as it
// would in production a statement's time later: the holder is a session
// the scheduler steps (or one waiting for the database's lock), and the
// waiter is a session waiting for it, like one waiting for the write lock.
func heldInStatement(g string) bool { return lockTaker(g) == "database/sql" }

// handlerLock reports whether g, one goroutine of a stack dump that waits
// for a Go lock, waits in the Lock of a handler's own code. A lock that a
// library takes inside (modernc's allocator and SQLite's own mutexes are Go
// mutexes, shared by every test of the binary) is held only while its
// holder runs, so a wait for it ends by itself: the bubble is not quiet.
func handlerLock(g string) bool {
	pkg := lockTaker(g)
	return pkg != enginePackage && strings.HasPrefix(pkg, modulePath+"/")
}

// lockTaker returns the package of the first frame of g, one goroutine of
// a stack dump that waits for a Go lock, outside sync and the runtime: the
// code that took the lock; "" if there is none.
func lockTaker(g string) string {
	for _, line := range strings.Split(g, "\n")[1:] {
		if line == "" || line[0] == '\t' {
			continue // a frame's file and line
		}
		fn := line
		if paren := strings.LastIndex(fn, "("); paren > 0 {
			fn = fn[:paren]
		}
		switch pkg := packagePath(fn); pkg {
		case "sync", "internal/sync", "runtime":
			continue
		default:
			return pkg
		}
	}
	return ""
}

// creator returns the id of the goroutine that started g, one goroutine
// of a stack dump, from its line "created by database/sql.OpenDB in
// goroutine 27"; "" if it has none.
func creator(g string) string {
	i := strings.LastIndex(g, "\ncreated by ")
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(g[i+1:], "\n")
	_, id, ok := strings.Cut(line, " in goroutine ")
	if !ok {
		return ""
	}
	return id
}

// selfAndBubble returns the calling goroutine's id and its bubble, as a
// stack dump names them ("812", "synctest bubble 3"); the bubble is ""
// outside one.
func selfAndBubble() (id, bubble string) {
	buf := make([]byte, 256)
	header, _, _ := strings.Cut(string(buf[:runtime.Stack(buf, false)]), "\n")
	m := goroutineHeader.FindStringSubmatch(header)
	if m == nil {
		return "", ""
	}
	_, bubble = goroutineState(m[2])
	return m[1], bubble
}

// pauses and paused carry RealAfter's requests to pacer and its answers
// back. pacer is a goroutine started with the package, outside every
// bubble: inside one, time.Sleep would move the bubble's fake clock, by
// however many pauses the real world took. It answers a request with a
// channel of its own making, closed once the pause is over by a goroutine
// it starts, so that pauses of many bubbles run side by side and every
// channel a bubble waits on was made outside it.
var (
	pauses = make(chan time.Duration)
	paused = make(chan chan struct{})
)

func init() {
	go pacer()
}

// pacer answers each request as soon as it is made; the answer is closed
// after the real time asked for. A request and its answer are taken one
// after the other, so each requester gets its own answer.
func pacer() {
	for d := range pauses {
		done := make(chan struct{})
		go func() {
			time.Sleep(d)
			close(done)
		}()
		paused <- done
	}
}

// RealAfter returns a channel that is closed once d of real time has
// passed, inside a synctest bubble as outside one. In a bubble, time.After
// and time.Now read the bubble's fake clock, which moves only when every
// goroutine of the bubble is blocked: a budget of real time, such as how
// long a search may spend shortening the story that broke a handler, is
// measured with RealAfter. A bubble may wait on the channel, but not
// durably: synctest.Wait does not count a goroutine blocked on it as idle.
func RealAfter(d time.Duration) <-chan struct{} {
	pauses <- d
	return <-paused
}

// realPause waits about d of real time, leaving the bubble's clock alone.
func realPause(d time.Duration) { <-RealAfter(d) }
