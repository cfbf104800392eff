package scenarios

import (
	"slices"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// MariaDB lists the scenarios run on MariaDB (InnoDB), in the order of its
// matrices' columns: PostgreSQL's, which mean the same there (LockTimeout
// told with a row lock, which innodb_lock_wait_timeout ends with 1205),
// two of its own, DeadlockRace and ConflictLockTimeout, and Property last,
// as on PostgreSQL. Property's deliveries while the tables are held end by
// the lab's KILL QUERY of the statement seen waiting (1317, busy; the
// transaction stays open and the handler rolls it back), and each story
// starts on an inbox emptied by TRUNCATE.
//
// DistinctRace runs as on PostgreSQL, but what it shows differs: two
// different events for one account deadlock on MariaDB (each inbox row's
// foreign key share-locks the account, and each credit waits for the
// other's shared lock), and InnoDB rolls one back with 1213 in the
// interleavings that write both rows before either credits. DeadlockRace
// runs one such schedule alone.
//
// Four of the shared scenarios also show, on MariaDB, a claim of
// MariaDB's own (CLAIMS.md, C39 onward), which their Claims field here
// adds: Duplicate (C42: ON DUPLICATE KEY UPDATE's count), Race (C43:
// REPEATABLE READ's snapshot and gap locks), DistinctRace (C41: the
// foreign key's deadlock) and UnknownAccount (C39: INSERT IGNORE).
var MariaDB = []labtest.Scenario{
	alsoCites(Named(All, "Duplicate"), "C42"),
	Named(All, "PayloadConflict"),
	Named(All, "Rollback"),
	Named(All, "FaultSweep"),
	Named(All, "Concurrent"),
	alsoCites(Named(All, "Race"), "C43"),
	Named(All, "ConflictRace"),
	Named(Postgres, "AbortRace"),
	alsoCites(Named(Postgres, "DistinctRace"), "C41"),
	Named(All, "SourceScope"),
	alsoCites(Named(All, "UnknownAccount"), "C39"),
	Named(All, "InvalidInput"),
	Named(All, "DistinctEvents"),
	{Name: "DeadlockRace", Short: "DLock", Claims: "C21, C25, C41",
		Shows: "two different events for one account, both written before either credits: InnoDB rolls one back (1213); both apply", Run: DeadlockRace},
	{Name: "LockTimeout", Short: "Lock", Claims: "C14, C15, C25",
		Shows: "the event's row held by an uncommitted delivery elsewhere: busy after innodb_lock_wait_timeout (1205), never duplicate; applies once later", Run: RowLockTimeout},
	{Name: "ConflictLockTimeout", Short: "CLock", Claims: "C14, C15, C25, C40",
		Shows: "the event's key held uncommitted for another account: busy after 1205, nothing kept; applies once later", Run: ConflictLockTimeout},
	Named(All, "Property"),
}

// alsoCites returns sc with claims added to its Claims field: what it
// shows on MariaDB besides what it shows everywhere.
func alsoCites(sc labtest.Scenario, claims string) labtest.Scenario {
	sc.Claims += ", " + claims
	return sc
}

// DeadlockRace delivers two different events for one account at once, in
// a schedule in which MariaDB deadlocks them: B and A each BEGIN and write
// their inbox row (whose foreign key share-locks the account), then the
// deliveries go on in turn, so that A's credit waits for B's shared lock
// and B's credit closes the cycle. InnoDB rolls one of them back with 1213,
// and the delivery must be run again: both events apply, once each. A
// deadlock says nothing about the event: never a duplicate. The scenario
// asks only what holds whichever transaction InnoDB picks.
func DeadlockRace(r *labtest.Run) {
	db := r.OpenScheduled()
	a, b := credit("evt-7", 500), credit("evt-8", 700)
	first := []string{"B", "B", "A", "A"}
	answers, schedule := db.Interleave(func(step int, parked []string, robin string) string {
		if step < len(first) && slices.Contains(parked, first[step]) {
			return first[step]
		}
		return robin
	}, []lab.Event{a}, []lab.Event{b})
	r.WantCounts(answers, 2, 0, 0)
	r.WantBalance(db, 1, 1200)
	r.WantInbox(db, 2)
	r.Notef("schedule %s: both applied; balance 1200", schedule)
}

// ConflictLockTimeout is LockTimeout with the held row on another account:
// a delivery of the same key for account 2 (a sender's mistake, or a
// replay with edited data) has written its inbox row and not committed it,
// so the handler's INSERT for account 1 waits for it until
// innodb_lock_wait_timeout ends the statement with 1205. Unlike
// LockTimeout's, nothing else of this delivery waits: the held row's
// foreign key share-locks account 2, not account 1. So a handler that
// carries on after the 1205 can credit account 1 and commit: the credit
// without its inbox row. The answer must be busy, and nothing kept; once
// the other delivery is gone, the redelivery applies, once.
func ConflictLockTimeout(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2})
	e := credit("evt-4", 500)
	other := e
	other.AccountID = 2
	release := db.HoldDelivery(other)
	r.WantError(db.Deliver(e), lab.ErrBusy)
	r.WantBalance(db, 1, 0)
	release()
	r.WantOutcome(db.Deliver(e), lab.Applied)
	r.WantBalance(db, 1, 500)
	r.WantBalance(db, 2, 0)
	r.Notef("the key held for account 2: busy, nothing kept; the redelivery: applied; balance 500")
}
