package scenarios

import (
	"fmt"
	"strings"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
)

// FaultSweep moves an injected error through a delivery one statement at a
// time, as SQLite's own anomaly tests do: before statement 1, after
// statement 1, before statement 2, … until the delivery runs clean. Each
// position is tried one-shot (the fault strikes once, then the event is
// redelivered) and persistent (it strikes every delivery until lifted, then
// the event is redelivered). Whatever the position, the database must hold
// either nothing of the event or all of it — never a credit without its
// inbox row or a row without its credit — and the redelivery must finish
// the job exactly once: applied if nothing was kept, duplicate if all was
// (a fault after COMMIT loses only the answer). Then the handler panics
// (Fault.Panic) before and after each statement it runs as an Exec, once:
// the panic unwinds the handler, whose deferred Rollback must end the
// transaction, and the lab recovers it as the delivery's error answer, as
// a server goes on after one request's panic. A last case fills the disk
// (PRAGMA max_page_count) until a delivery does not fit, then frees it.
func FaultSweep(r *labtest.Run) {
	cases, panics, broken := 0, 0, 0
	try := func(name string, body func(c *labtest.Run)) {
		if !r.Case(name, body) {
			broken++
		}
	}
	for _, j := range journalsOf(r) {
		steps := 0 // how many statements a clean delivery runs
		for _, persistent := range []bool{false, true} {
			mode := "one-shot"
			if persistent {
				mode = "persistent"
			}
			for k := 1; ; k++ {
				fired := false
				for _, when := range []labtest.When{labtest.Before, labtest.After} {
					try(fmt.Sprintf("%s, %s fault %s statement %d", j.name, mode, when, k), func(c *labtest.Run) {
						if faultAt(c, j.open(c), labtest.Fault{When: when, N: k, Persistent: persistent}) {
							fired = true
							cases++
						}
					})
				}
				if !fired {
					break // the delivery has fewer than k statements: it ran clean
				}
				steps = max(steps, k)
			}
		}
		for k := 1; k <= steps; k++ {
			for _, when := range []labtest.When{labtest.Before, labtest.After} {
				try(fmt.Sprintf("%s, panic %s statement %d", j.name, when, k), func(c *labtest.Run) {
					// Statements that are not an Exec (BEGIN, a query,
					// COMMIT) take no panic: the case runs clean.
					if faultAt(c, j.open(c), labtest.Fault{When: when, N: k, Panic: true}) {
						cases++
						panics++
					}
				})
			}
		}
		if _, server := r.Server(); server {
			continue // a full disk is SQLite's max_page_count; a server has no per-connection cap
		}
		cases++
		try(j.name+", full disk", func(c *labtest.Run) { fullDisk(c, j.open(c)) })
	}
	if broken == 0 {
		where := "in both journal modes"
		if _, server := r.Server(); server {
			where = "on a server (no full disk there)"
		}
		r.Notef("%d fault cases %s (%d of them a panic): each left nothing or everything, "+
			"and the redelivery finished the job once", cases, where, panics)
	}
}

// journals are the two ways SQLite makes a commit durable; faults and
// crashes are tried in both.
var journals = []struct {
	name string
	open func(c *labtest.Run) *labtest.DB
}{
	{"rollback journal", func(c *labtest.Run) *labtest.DB { return c.Open() }},
	{"WAL", func(c *labtest.Run) *labtest.DB { return c.OpenWAL() }},
}

// journalsOf returns the journal modes to try for r: SQLite's two, or
// a server's one write-ahead log.
func journalsOf(r *labtest.Run) []struct {
	name string
	open func(c *labtest.Run) *labtest.DB
} {
	if _, server := r.Server(); server {
		return journals[:1:1]
	}
	return journals
}

// faultAt delivers one event under fault f (twice when f is persistent),
// checks that each attempt left all or nothing, lifts the fault, redelivers,
// and reports whether the fault struck at all. It asks (Fault.Fired), so
// a fault that did not strike is the sweep's end, not a case that could
// not judge the handler: the delivery ran clean, and allOrNothing judged
// it as such.
func faultAt(c *labtest.Run, db *labtest.DB, f labtest.Fault) bool {
	e := credit("evt-6", 500)
	fault := db.Inject(f)
	attempts := 1
	if f.Persistent {
		attempts = 2
	}
	kept := false
	for range attempts {
		a := db.Deliver(e, labtest.Delivery{Unchecked: true})
		kept = allOrNothing(c, db, a) || kept
	}
	if fault.Fired() == 0 {
		return false
	}
	db.Lift()
	finishOnce(c, db, e, kept)
	return true
}

// finishOnce redelivers e after a fault or a crash and checks that it
// finishes the job exactly once: applied if nothing of it was kept, a
// duplicate if all of it was.
func finishOnce(c *labtest.Run, db *labtest.DB, e lab.Event, kept bool) {
	want := lab.Applied
	if kept {
		want = lab.Duplicate
	}
	c.WantOutcome(db.Deliver(e), want)
	c.WantBalance(db, 1, e.Amount)
	c.WantInbox(db, 1)
}

// allOrNothing checks that after attempt a the database holds none of the
// event or all of it, and that an "applied" answer means all of it. It
// reports whether the event is kept.
func allOrNothing(c *labtest.Run, db *labtest.DB, a labtest.Answer) bool {
	kept, half := keptWhole(db, a.Event)
	switch {
	case half != "":
		c.Errorf("%s: Process(%v) = %v, and left it half done: %s", a.Session, a.Event, a, half)
	case !kept && a.Err == nil:
		c.Errorf("%s: Process(%v) = %v, but nothing was kept", a.Session, a.Event, a)
	}
	return kept
}

// keptWhole reads what the database holds of e, the only event of a fresh
// database: all of it (kept), none of it, or part — then half describes it.
func keptWhole(db *labtest.DB, e lab.Event) (kept bool, half string) {
	rows, balance := db.InboxRows(), db.Balance(e.AccountID)
	switch {
	case rows == 0 && balance == 0:
		return false, ""
	case rows == 1 && balance == e.Amount:
		return true, ""
	}
	return rows > 0, fmt.Sprintf("%s, balance %d", report.Count(rows, "inbox row", "inbox rows"), balance)
}

// fullDisk caps the database at its current size and delivers new events
// until one does not fit: that one must fail and leave nothing (Deliver
// checks it), with an error that does not blame the event (not invalid
// event, unknown account or payload conflict: a full disk is no fault of
// the event's, and the provider must retry), and once the cap is lifted
// its redelivery applies.
func fullDisk(c *labtest.Run, db *labtest.DB) {
	db.LimitPages(db.PageCount())
	pad := strings.Repeat("x", 100) // long ids fill pages fast
	for i := 1; i <= 500; i++ {
		e := lab.Event{Source: "provider-a", EventID: fmt.Sprintf("evt-%03d-%s", i, pad), AccountID: 1, Amount: int64(i)}
		a := db.Deliver(e)
		if a.Err == nil {
			c.WantOutcome(a, lab.Applied)
			continue
		}
		if kind := lab.ErrorKind(a.Err); kind != "other error" && kind != "busy" {
			c.Errorf("%s: Process(%v) = %v on a full disk (SQLITE_FULL), want an error the provider retries, "+
				"not %s: the disk, not the event, is at fault", a.Session, e, a, kind)
		}
		db.LimitPages(0)
		c.WantOutcome(db.Deliver(e), lab.Applied)
		c.WantBalance(db, 1, int64(i*(i+1)/2)) // 1 + 2 + … + i
		return
	}
	c.Errorf("500 deliveries into a database capped at its size all applied; want one to fail with SQLITE_FULL")
}
