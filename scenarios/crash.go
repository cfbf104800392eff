package scenarios

import (
	"fmt"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Crash kills the process that is delivering an event, leaving its files
// as SIGKILL would (labtest.DB.Crash says how; TestCrashIsAKill holds that
// to a real SIGKILL), before and after each of its statements in turn —
// after COMMIT too, when the work is durable but the answer never left — in
// both journal modes. The database is reopened as a restarted service
// would, and must pass PRAGMA integrity_check and hold all of the event or
// none of it; the redelivery must then finish the job exactly once.
//
// A kill between statements cannot see what a journal kept in memory, or
// none, costs: the process would have to die inside COMMIT's own writes to
// the database file, and the machine lose power after COMMIT for a sync
// left out to matter. So first, in each journal mode, after one delivery,
// the column asks every connection of the handler's pool, and one the pool
// opens then (labtest.DB.Durability), for its journal mode and its
// synchronous setting, and refuses those that give a committed transaction
// away (see givesAway).
func Crash(r *labtest.Run) {
	cases, broken, conns := 0, 0, 0
	for _, j := range journals {
		held := r.Case(j.name+", durability settings", func(c *labtest.Run) {
			db := j.open(c)
			c.WantOutcome(db.Deliver(credit("evt-7", 500)), lab.Applied)
			for _, d := range db.Durability() {
				conns++
				c.Transcript.Note("lab", "PRAGMA journal_mode; PRAGMA synchronous", d.String())
				if why := givesAway(d); why != "" {
					c.Errorf("%s: %s", d, why)
				}
			}
		})
		if !held {
			broken++
		}
	}
	for _, j := range journals {
		for k := 1; ; k++ {
			clean := false
			for _, when := range []labtest.When{labtest.Before, labtest.After} {
				held := r.Case(fmt.Sprintf("%s, killed %s statement %d", j.name, when, k), func(c *labtest.Run) {
					db := j.open(c)
					e := credit("evt-7", 500)
					a := db.Deliver(e, labtest.Delivery{Kill: when, KillAt: k})
					if !a.Killed {
						clean = true
						c.WantOutcome(a, lab.Applied)
						return
					}
					cases++
					kept := recovered(c, db, e, fmt.Sprintf("killed %s statement %d", when, k))
					finishOnce(c, db, e, kept)
				})
				if !held {
					broken++
				}
			}
			if clean {
				break // the delivery has fewer than k statements: it ran clean
			}
		}
	}
	if broken == 0 {
		r.Notef("%d crash points in both journal modes: each recovered to all or nothing, and the redelivery finished the job once; %d connections' journal_mode and synchronous keep a commit", cases, conns)
	}
}

// givesAway says why a connection's durability settings give a committed
// transaction away, or returns "". The facts are SQLite's
// (https://sqlite.org/pragma.html#pragma_journal_mode and
// #pragma_synchronous), and were seen on modernc.org/sqlite v1.62.0
// (SQLite 3.54.1): a DSN's _pragma=journal_mode(MEMORY), (OFF), (WAL) and
// _pragma=synchronous(OFF), (NORMAL) each show on every connection the pool
// opens, and its default is synchronous=FULL (2) in both journal modes, so
// equivalent/wal, which sets only journal_mode(WAL), is held to FULL and
// passes.
//
//   - journal_mode=MEMORY keeps the rollback journal in RAM, and OFF keeps
//     none: "if the application using SQLite crashes in the middle of a
//     transaction … the database file will very likely go corrupt", and with
//     OFF "the ROLLBACK command no longer works". Seen in a run: a
//     transaction whose pages reach the file before COMMIT (an UPDATE of
//     2,000 rows with cache_size(10)), its files copied at that instant as
//     Crash copies them, reopens with 1,881 of its 2,000 rows changed under
//     MEMORY and under OFF, and with none under DELETE, whose journal on
//     disk rolls it back. A delivery's few pages reach the file only inside
//     COMMIT, where Crash does not kill.
//   - synchronous=OFF: SQLite "continues without syncing as soon as it has
//     handed data off to the operating system": the database "might become
//     corrupted if the operating system crashes or the computer loses power".
//   - synchronous=NORMAL in WAL mode: "no sync operations occur during most
//     transactions" (the WAL and the file are synced around a checkpoint,
//     which the commit that crosses the auto-checkpoint threshold runs), and
//     "a transaction committed in WAL mode with synchronous=NORMAL might
//     roll back following a power loss or system crash". FULL syncs the WAL
//     after each commit.
//   - synchronous=NORMAL on a rollback journal: "a very small (though
//     non-zero) chance that a power failure at just the wrong time could
//     corrupt the database in journal_mode=DELETE on an older filesystem";
//     FULL "ensures that an operating system crash or power failure will
//     not corrupt the database". A corrupt file gives every commit away,
//     so NORMAL is refused in every journal mode, in the mode each
//     connection runs in: a DSN that pins journal_mode(DELETE) beside
//     synchronous(NORMAL) keeps the WAL case's file out of WAL mode, and
//     is refused on its rollback journal.
//
// Accepted, and said here so that nobody reads more into the column: FULL
// in DELETE mode, which does not sync the directory after the journal is
// deleted; only EXTRA does, which "provides additional durability if the
// commit is followed closely by a power loss". correct runs with SQLite's
// default, FULL.
func givesAway(d labtest.Durability) string {
	switch {
	case d.JournalMode == "memory":
		return "journal_mode=MEMORY keeps the rollback journal in RAM: a process that dies inside COMMIT's writes leaves the file half-written, with no journal to roll it back"
	case d.JournalMode == "off":
		return "journal_mode=OFF keeps no rollback journal: COMMIT is not atomic, ROLLBACK does not work, and a process that dies inside COMMIT's writes leaves the file half-written"
	case d.Synchronous == 0:
		return "synchronous=OFF never syncs: a committed transaction, or the whole file, may be lost when the machine loses power"
	case d.JournalMode == "wal" && d.Synchronous == 1:
		return "synchronous=NORMAL in WAL mode syncs the WAL only at a checkpoint, not at every COMMIT: a committed transaction might roll back after a power loss"
	case d.Synchronous == 1:
		return "synchronous=NORMAL syncs less often than FULL: a power failure at the wrong moment may corrupt the database, and every commit in it"
	}
	return ""
}

// recovered checks that the reopened database holds all of e or none of it,
// and reports whether it holds all.
func recovered(c *labtest.Run, db *labtest.DB, e lab.Event, how string) bool {
	kept, half := keptWhole(db, e)
	if half != "" {
		c.Errorf("Process(%v) %s, then reopened = %s, want all of the event or none", e, how, half)
	}
	return kept
}
