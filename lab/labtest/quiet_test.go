package labtest

import (
	"strings"
	"testing"
)

// TestGoroutineState reads goroutine headers as the runtime writes them,
// with what it adds between a goroutine's wait and its bubble.
func TestGoroutineState(t *testing.T) {
	for _, c := range []struct{ status, wait, bubble string }{
		{"running", "running", ""},
		{"running, locked to thread", "running", ""},
		{"chan receive, 1 minutes", "chan receive", ""},
		{"sync.Cond.Wait (durable), synctest bubble 5", "sync.Cond.Wait (durable)", "synctest bubble 5"},
		{"chan receive (durable), 1 minutes, synctest bubble 6", "chan receive (durable)", "synctest bubble 6"},
		{"sync.Mutex.Lock, 12 minutes, synctest bubble 6", "sync.Mutex.Lock", "synctest bubble 6"},
		{"chan receive (durable), locked to thread, synctest bubble 2", "chan receive (durable)", "synctest bubble 2"},
		{"select (scan) (durable), synctest bubble 3", "select (durable)", "synctest bubble 3"},
		{`sleep (durable), synctest bubble 4 labels:{"k": "v, w"}`, "sleep (durable)", "synctest bubble 4"},
	} {
		if wait, bubble := goroutineState(c.status); wait != c.wait || bubble != c.bubble {
			t.Errorf("goroutineState(%q) = %q, %q, want %q, %q", c.status, wait, bubble, c.wait, c.bubble)
		}
	}
}

// stalledDump is the stack dump of a Go-lock cell that the watchdog stopped
// a minute into a check (businesskey, a handler behind a whole-Process
// mutex), cut to the bubble's goroutines: session B parked at its BEGIN
// with the lock, C waiting for it, A held between two deliveries, and the
// bubble's root, which had waited a minute of real time. The scheduler,
// goroutine 224, was looking for the bubble quiet.
const stalledDump = `goroutine 125193 [chan receive (durable), synctest bubble 6]:
idemlab/lab/labtest.(*scheduler).park(0x39a3d283e140, 0x39a3cc8d6700)
	/work/lab/labtest/scheduler.go:131 +0xe5
idemlab/exercises/businesskey.(*Handler).Process(0x39a3d104de30, {0x10b7868, 0x39a3d27d21b0})
	/work/exercises/businesskey/process.go:48 +0xc5
created by idemlab/lab/labtest.(*DB).schedule in goroutine 224
	/work/lab/labtest/scheduler.go:316 +0x5c9

goroutine 125205 [select (durable), synctest bubble 6]:
database/sql.(*DB).connectionOpener(0x39a3d28381a0, {0x10b78a0, 0x39a3d22c5c70})
	/usr/local/go/src/database/sql/sql.go:1261 +0x89
created by database/sql.OpenDB in goroutine 224
	/usr/local/go/src/database/sql/sql.go:841 +0x130

goroutine 223 [chan receive (durable), 1 minutes, synctest bubble 6]:
testing/synctest.testingSynctestTest(0x39a3cb874488, 0x39a3cb702000)
	/usr/local/go/src/testing/testing.go:2151 +0x292
created by testing/synctest.Test in goroutine 222
	/usr/local/go/src/testing/synctest/synctest.go:290 +0x90

goroutine 222 [synctest.Run (durable), synctest bubble 6]:
internal/synctest.Run(0x39a3cb6b46a0)
	/usr/local/go/src/runtime/synctest.go:218 +0x1e6
created by idemlab/lab/labtest.runCell in goroutine 6
	/work/lab/labtest/scenario.go:81 +0x24f

goroutine 224 [running, synctest bubble 6]:
idemlab/lab/labtest.(*bubbleWatch).dump(0x39a3d283e1e0)
	/work/lab/labtest/quiet.go:81 +0xeb
created by testing/synctest.testingSynctestTest in goroutine 223
	/usr/local/go/src/testing/testing.go:2150 +0x277

goroutine 125207 [chan receive (durable), synctest bubble 6]:
idemlab/lab/labtest.(*scheduler).between(0xfddbee, 0x39a3d283e190)
	/work/lab/labtest/scheduler.go:159 +0x97
created by idemlab/lab/labtest.(*DB).schedule in goroutine 224
	/work/lab/labtest/scheduler.go:316 +0x5c9

goroutine 125194 [sync.Mutex.Lock, synctest bubble 6]:
internal/sync.runtime_SemacquireMutex(0x4a192a, 0xa0, 0x39a3d19477d8)
	/usr/local/go/src/runtime/sema.go:95 +0x25
internal/sync.(*Mutex).lockSlow(0x39a3d104de38)
	/usr/local/go/src/internal/sync/mutex.go:149 +0x15d
sync.(*Mutex).Lock(...)
	/usr/local/go/src/sync/mutex.go:46
idemlab/exercises/businesskey.(*Handler).Process(0x39a3d104de30, {0x10b7868, 0x39a3d27d2450})
	/work/exercises/businesskey/process.go:46 +0x71
created by idemlab/lab/labtest.(*DB).schedule in goroutine 224
	/work/lab/labtest/scheduler.go:316 +0x5c9
`

// TestQuietAMinuteIn holds the readers of a stack dump to a bubble whose
// goroutines have waited a minute of real time: stalledDump is quiet, with
// a delivery waiting for the handler's Go lock, and wedged on that lock
// once its scheduler stops too. Read as a goroutine that may run, the
// root's wait kept every look of the scheduler from finding the bubble
// quiet, and the cell waited for the watchdog.
func TestQuietAMinuteIn(t *testing.T) {
	w := &bubbleWatch{self: "224", bubble: "synctest bubble 6", ours: map[string]bool{"224": true}, others: map[string]bool{},
		cell: &cellState{goLocks: true}}
	if quiet, locked, stray := w.quietIn(stalledDump); !quiet || !locked || stray {
		t.Errorf("quietIn(the dump of a cell stopped a minute in) = %v, %v, %v, want true, true, false", quiet, locked, stray)
	}
	// Without the scheduler, which runs there, the bubble is wedged on the
	// handler's lock: nothing of it runs, or will.
	scheduler := "goroutine 224 [running, synctest bubble 6]:"
	i := strings.Index(stalledDump, scheduler)
	j := i + strings.Index(stalledDump[i:], "\n\n") + 2
	if locked, inStatement := goLockWedge(stalledDump[:i]+stalledDump[j:], "synctest bubble 6"); !locked || inStatement {
		t.Errorf("goLockWedge(the dump without its scheduler) = %v, %v, want true, false", locked, inStatement)
	}
	if got := describeBlocked(stalledDump, "synctest bubble 6", 6); !strings.Contains(got, "a goroutine waits (sync.Mutex.Lock) in idemlab/exercises/businesskey") {
		t.Errorf("describeBlocked(the dump of a cell stopped a minute in) =\n%s\nwant the wait for the handler's lock", got)
	}
}

// TestConnLockWaits holds the readers of a stack dump to telling a wait for
// database/sql's lock on a connection (RowsAffected, after another
// delivery took the connection and was parked inside its statement) from a
// wait for a lock of the handler's own: the first is a wait for the
// parked statement, quiet in any cell; the second is quiet only in a cell
// that schedules Go locks, and stray in another. A wedge on the first is
// named as such.
func TestConnLockWaits(t *testing.T) {
	const parked = `goroutine 11 [chan receive (durable), synctest bubble 6]:
idemlab/lab/labtest.(*scheduler).park(0x1, 0x2)
	/x/lab/labtest/scheduler.go:131 +0xe5
idemlab/exercises/retention.(*Handler).Process(0x1, {0x2, 0x3})
	/x/exercises/retention/process.go:29 +0xeb`
	const inRowsAffected = `goroutine 10 [sync.Mutex.Lock, synctest bubble 6]:
internal/sync.runtime_SemacquireMutex(0x1?, 0xf8?, 0x1?)
	/usr/local/go/src/runtime/sema.go:95 +0x25
sync.(*Mutex).Lock(...)
	/usr/local/go/src/sync/mutex.go:46
database/sql.driverResult.RowsAffected({{0x1, 0x2}, {0x3, 0x4}})
	/usr/local/go/src/database/sql/sql.go:3558 +0x67
idemlab/exercises/retention.Purge({0x1, 0x2}, 0x3, {0x4, 0x5, 0x6})
	/x/exercises/retention/purge.go:23 +0xdc`
	const inHandler = `goroutine 10 [sync.Mutex.Lock, synctest bubble 6]:
internal/sync.runtime_SemacquireMutex(0x1?, 0xf8?, 0x1?)
	/usr/local/go/src/runtime/sema.go:95 +0x25
sync.(*Mutex).Lock(...)
	/usr/local/go/src/sync/mutex.go:46
idemlab/exercises/retention.Purge({0x1, 0x2}, 0x3, {0x4, 0x5, 0x6})
	/x/exercises/retention/purge.go:23 +0xdc`
	for _, c := range []struct {
		name, waiter             string
		goLocks                  bool
		quiet, locked, stray, db bool
	}{
		{"RowsAffected, a lock-free cell", inRowsAffected, false, true, true, false, true},
		{"RowsAffected, a Go-lock cell", inRowsAffected, true, true, true, false, true},
		{"the handler's lock, a lock-free cell", inHandler, false, true, false, true, false},
		{"the handler's lock, a Go-lock cell", inHandler, true, true, true, false, false},
	} {
		dump := c.waiter + "\n\n" + parked + "\n"
		w := &bubbleWatch{self: "1", bubble: "synctest bubble 6", ours: map[string]bool{"1": true}, others: map[string]bool{},
			cell: &cellState{goLocks: c.goLocks}}
		quiet, locked, stray := w.quietIn(dump)
		if quiet != c.quiet || locked != c.locked || stray != c.stray {
			t.Errorf("quietIn(%s) = %v, %v, %v, want %v, %v, %v", c.name, quiet, locked, stray, c.quiet, c.locked, c.stray)
		}
		if wedged, inStatement := goLockWedge(dump, "synctest bubble 6"); !wedged || inStatement != c.db {
			t.Errorf("goLockWedge(%s) = %v, %v, want true, %v", c.name, wedged, inStatement, c.db)
		}
	}
}
