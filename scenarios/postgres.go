package scenarios

import (
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Postgres lists the scenarios run on PostgreSQL, in the order of its
// matrix's columns: those of All that mean the same there, LockTimeout told
// with a row lock instead of SQLite's write lock, and two races PostgreSQL
// adds, where the isolation level decides what the second delivery sees,
// then Property, whose stories run as on SQLite except for one action:
// deliveries while the tables are locked end by the lab cancelling the
// waiting statement on the server (57014) instead of by a 50 ms caller
// deadline. Its 100 stories (rapid's default, seed 1 from TestMain) cost
// 1–5 s a cell here, and shrinking a counterexample, done only when someone
// reads the story (-lab.strict, -lab.report), up to 30 s: affordable, so
// all of them run. Left out: SQLite's journal modes, full disk and crash
// recovery (Crash, CommitWait), the caller's cancel (pgx closes the
// connection on it), and the columns that rewrite arguments at the driver.
var Postgres = []labtest.Scenario{
	Named(All, "Duplicate"),
	Named(All, "PayloadConflict"),
	Named(All, "Rollback"),
	Named(All, "FaultSweep"),
	Named(All, "Concurrent"),
	Named(All, "Race"),
	Named(All, "ConflictRace"),
	{Name: "AbortRace", Short: "ARace", Claims: "C4, C25",
		Shows: "two deliveries at once, the first rolled back before COMMIT, every interleaving: the second applies", Run: AbortRace},
	{Name: "DistinctRace", Short: "DRace", Claims: "C21, C25",
		Shows: "two different events for one account at once, every interleaving: both apply", Run: DistinctRace},
	Named(All, "SourceScope"),
	Named(All, "UnknownAccount"),
	Named(All, "InvalidInput"),
	Named(All, "DistinctEvents"),
	{Name: "LockTimeout", Short: "Lock", Claims: "C14, C15, C25",
		Shows: "the event's row held by an uncommitted delivery elsewhere: busy after lock_timeout (55P03), never duplicate; applies once later", Run: RowLockTimeout},
	Named(All, "Property"),
}

// Named returns the scenario of list called name. A name the list does
// not hold is the caller's mistake, and panics.
func Named(list []labtest.Scenario, name string) labtest.Scenario {
	for _, sc := range list {
		if sc.Name == name {
			return sc
		}
	}
	panic("scenarios: no scenario " + name)
}

// AbortRace delivers the same event twice at once, in every interleaving,
// and the first delivery's COMMIT fails (an injected error, which really
// rolls it back). The second delivery may have waited for the first one's
// row: once that is gone it must apply, whatever the isolation level —
// neither a duplicate of an event that was never kept nor an error.
//
// The story is about A's COMMIT. In an interleaving where A never reaches
// it — at REPEATABLE READ or SERIALIZABLE, B commits first and A's INSERT
// fails with a serialization failure, which naive/serialasduplicate
// answers as duplicate, rightly this time, B having applied it — the
// fault never fires, and the interleaving cannot judge the handler (the
// engine makes it neutral, saying so): its answers say nothing of a
// rolled-back delivery.
func AbortRace(r *labtest.Run) {
	e := credit("evt-6", 500)
	r.Interleavings(nil, [][]lab.Event{{e}, {e}}, func(c *labtest.Run, db *labtest.DB, answers []labtest.Answer) {
		c.WantBalance(db, 1, 500)
		c.WantCounts(answers, 1, 0, 1)
		for _, a := range answers {
			if a.Session == "A" {
				c.WantError(a, labtest.ErrInjected)
			}
		}
	}, labtest.Fault{When: labtest.Before, Op: labtest.OpCommit, Session: "A", Persistent: true})
	judged := 0
	for _, p := range r.Permutations {
		if p.Neutral == "" {
			judged++
		}
	}
	if judged == len(r.Permutations) {
		r.Notef("all %d interleavings: the first rolled back, the second applied; balance 500", judged)
		return
	}
	r.Notef("all %d interleavings in which the first reached its COMMIT: it rolled back, the second applied; balance 500", judged)
}

// DistinctRace delivers two different events for the same account at once,
// in every interleaving. Both credit one row of accounts: at READ COMMITTED
// the second UPDATE waits for the first and then adds to the committed
// balance; at REPEATABLE READ and SERIALIZABLE it fails with 40001 instead,
// and only a handler that runs the delivery again applies it. Either way
// both events apply, once each.
func DistinctRace(r *labtest.Run) {
	a, b := credit("evt-7", 500), credit("evt-8", 700)
	r.Interleavings(nil, [][]lab.Event{{a}, {b}}, func(c *labtest.Run, db *labtest.DB, answers []labtest.Answer) {
		c.WantBalance(db, 1, 1200)
		c.WantCounts(answers, 2, 0, 0)
	})
	r.Notef("all %d interleavings: both applied; balance 1200", len(r.Permutations))
}

// RowLockTimeout is LockTimeout on PostgreSQL. Another delivery of the same
// event, in another process, has written its inbox row and not committed
// it: the lab stalls one with the variant's own handler
// (labtest.DB.HoldDelivery), so the row is the one this variant writes,
// whatever its inbox looks like. The handler's INSERT waits for that
// transaction until the server's lock_timeout ends it with 55P03. The
// answer must be busy — the other delivery may still roll back — never
// duplicate, and nothing may be kept. Then the other delivery's process is
// gone (the lab closes its connection: its row goes, and it answers an
// error), and the redelivery applies, once. Here the timeout is the
// scenario, so the database is opened with Open and keeps the variant's
// lock_timeout; the scheduled scenarios open theirs without it
// (labtest.Run.OpenScheduled), so that none of their verdicts depends on
// how long a wait took.
func RowLockTimeout(r *labtest.Run) {
	db := r.Open()
	e := credit("evt-4", 500)
	release := db.HoldDelivery(e)
	r.WantError(db.Deliver(e), lab.ErrBusy)
	if a := release(); a.Err == nil {
		r.Errorf("%s: Process(%v) = %v, want an error: its process lost its connection", a.Session, e, a)
	}
	r.WantOutcome(db.Deliver(e), lab.Applied)
	r.WantBalance(db, 1, 500)
	r.Notef("row held by a stalled delivery: busy; that one failed; the redelivery: applied; balance 500")
}
