package checks_test

import (
	"testing"

	"idemlab/checks"
	"idemlab/lab"
)

// The gallery holds each check to rejecting wrong fixes; the tests here
// hold it to the other half of its job: accepting right ones written
// another way than the reference solution. Each is a fix a helper playing
// a blind student wrote (one who read EXERCISES.md and the article, never
// a check), right by SQLite's and the exercise's rules, that a check of
// its day rejected; the whole check, every guarantee, must accept it.

// accept holds impl, a right fix, to the whole of check: every guarantee
// must hold.
func accept[I any](t *testing.T, check checks.Check[I], impl I) {
	t.Helper()
	c := &checks.Checker{T: t}
	check(c, impl)
	if failures := c.Failures(); len(failures) > 0 {
		t.Errorf("the check rejects this right fix:\n%s", checks.Render("the right fix", "", failures, ""))
	}
}

// rightFix is a right fix of an exercise that repairs a handler.
type rightFix struct {
	name, story string
	fix         ledger
	check       checks.Check[lab.Variant]
}

var rightRepairs = []rightFix{
	// Exercise 2. The student leaves the DSN as it is and gives each
	// delivery a connection of its own (db.Conn), runs PRAGMA foreign_keys
	// = ON on it, outside any transaction, and begins on that same
	// connection: every delivery's transaction runs with foreign keys on.
	// When the lab breaks that connection under BEGIN (driver.ErrBadConn),
	// database/sql cannot begin again on another, since the handler holds
	// this one: the delivery answers the error, having written nothing, and
	// the provider's retry applies the event. AccountSearch wanted
	// "applied" from the delivery whose connection it broke.
	{"missingaccount/pragma-on-its-own-connection", "each delivery on a connection of its own: PRAGMA foreign_keys = ON, then BEGIN, on it",
		ledger{rowCheck: true, pragmaOnConn: true, dsn: dsnWith("?_pragma=busy_timeout(5000)&_txlock=immediate")}, checks.MissingAccount},
}

func TestAcceptedRepairs(t *testing.T) {
	for _, r := range rightRepairs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			accept(t, r.check, r.fix.variant("accepted/"+r.name))
		})
	}
}
