package labtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"idemlab/lab"
)

// Crash tests (Delivery.Kill) need a process to die mid-delivery: not an error the handler
// sees, but a death that leaves the database files as the operating system
// had them at that instant. What SQLite finds after a SIGKILL is exactly
// that: every write() the process made is in the operating system's page
// cache, nothing after it happened, and the process's locks are gone (the
// kit never tests power loss, which would also lose what was written but
// not synced). The lab produces the same files without a second process:
// at the chosen statement the hook copies the database file and its
// journal, WAL and shared-memory files, byte for byte, and from then on the
// delivery is dead — its statements are refused, nothing it does is logged,
// and its answer is never seen. The lab then closes the pool, puts the copies
// in place of the files the dead delivery went on to touch, and opens the
// database again, as a restarted service would. TestCrashIsAKill holds the
// copies to a real SIGKILL of a child process at every crash point of
// correct and of a variant that breaks there: the same database file, byte
// for byte, the same journal or WAL, and the same state once reopened.
//
// In rollback-journal mode SQLite rolls a hot journal back at the first
// read after opening, not at the open itself
// (https://sqlite.org/lockingv3.html#hot_journals): the first read after
// the restart is when recovery happens. In WAL mode the frames of committed
// transactions left in the WAL are part of the database, and those of the
// transaction that died are not.

// errKilled is what a dead delivery's handler gets from every call after
// its death, without the call running. Nobody sees it: the process it
// stands for is gone.
var errKilled = errors.New("lab: the process was killed here")

// crashFiles are the suffixes of the files SQLite keeps beside a database:
// the database itself, the rollback journal, the WAL and the WAL's index.
var crashFiles = []string{"", "-journal", "-wal", "-shm"}

// crash delivers e as a new session and kills it on side when of its
// statement n, and reopens the database afterwards (Delivery.Kill). Its
// answer is Killed; a delivery with fewer than n statements ran clean and
// answered.
func (db *DB) crash(e lab.Event, when When, n int) Answer {
	tb := db.run.tb
	tb.Helper()
	if db.pg != nil {
		tb.Fatalf("Deliver(%v, Delivery{Kill: %v}): a crash is SQLite's (PostgreSQL's recovery is the server's own)", e, when)
	}
	session := db.run.nextSession()
	f := db.Inject(Fault{When: when, N: n, Session: session, crash: true})
	a := db.deliver(session, e, 0)
	db.mu.Lock()
	frozen := db.frozen
	db.frozen = ""
	db.mu.Unlock()
	if f.fired == 0 {
		f.spent = true
		return a
	}
	defer os.RemoveAll(frozen)
	// What the dead delivery left running — an open transaction the pool
	// rolls back as it closes — touches the files after the instant of
	// death; the copies taken at that instant replace them.
	if err := errors.Join(db.sql.Close(), db.own.Close()); err != nil {
		tb.Fatalf("closing after the crash: %v", err)
	}
	for _, suffix := range crashFiles {
		if err := os.Remove(db.Path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			tb.Fatalf("crash: %v", err)
		}
		kept := filepath.Join(frozen, filepath.Base(db.Path)+suffix)
		if err := os.Rename(kept, db.Path+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			tb.Fatalf("crash: %v", err)
		}
	}
	db.run.Transcript.Note("", "(the process was killed: its files are as it left them; reopening the database)", "")
	db.reopen()
	return Answer{Killed: true}
}

// reopen starts the service again after a crash: a new connection pool on
// the same file and DSN, and a new handler on it.
func (db *DB) reopen() {
	db.sql, db.own, db.snap = db.openPool(), db.openPool(), nil
	db.proc = db.run.Variant.New(db.sql)
}

// die is the crash fault striking statement s on side w: the files are
// copied as they are at this instant, and the session is dead from here
// on (see dead).
func (db *DB) die(s *stmt, w When) error {
	if w == Before {
		db.run.Transcript.stepNote(s, "<killed before it ran>")
	} else {
		db.run.Transcript.Note(s.Session, "", "<killed after it ran, before the handler saw its result>")
	}
	db.run.Transcript.silence(s.Session)
	frozen, err := os.MkdirTemp(filepath.Dir(db.Path), "killed-")
	if err != nil {
		db.run.tb.Fatalf("crash: %v", err)
	}
	for _, suffix := range crashFiles {
		data, err := os.ReadFile(db.Path + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(frozen, filepath.Base(db.Path)+suffix), data, 0o600)
		}
		if err != nil {
			db.run.tb.Fatalf("crash: keeping %s: %v", db.Path+suffix, err)
		}
	}
	if killProcess != nil {
		killProcess()
	}
	db.mu.Lock()
	db.dead[s.Session] = true
	db.frozen = frozen
	db.mu.Unlock()
	return fmt.Errorf("%w (%s statement %d)", errKilled, w, s.N)
}

// killProcess, when set, kills the process for real once die has taken its
// copies. Only the child process of TestCrashIsAKill sets it: its parent
// then compares the copies with the files SIGKILL left.
var killProcess func()

// isDead reports whether session was killed by a crash fault: its process
// is gone, so nothing it would still do may run or be seen.
func (db *DB) isDead(session string) bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.dead[session]
}
