package labtest

import (
	"database/sql/driver"
	"errors"
	"fmt"
)

// ErrInjected is the error an injected fault returns, unless the fault names
// another. A handler should pass it up as it is: it is neither a duplicate nor
// a reason to commit.
var ErrInjected = errors.New("injected fault")

// When says on which side of a statement a fault strikes.
type When int

const (
	// Before: the statement does not run; the handler gets the error instead.
	// Before a COMMIT, the transaction is rolled back for real.
	Before When = iota + 1
	// After: the statement has run (and, outside a transaction or for a
	// COMMIT, is durable); the handler gets the error instead of its result.
	After
)

// String returns "before" or "after".
func (w When) String() string {
	if w == Before {
		return "before"
	}
	return "after"
}

// Fault is a failure injected by the hooking driver. It is addressed by what
// a statement does, not by where it sits in some variant's code, so that the
// same fault applies to every variant: "before the UPDATE of accounts" hits
// the correct handler inside its transaction and markfirst after its inbox
// row is already committed.
type Fault struct {
	When    When
	Op      Op     // the statement's operation; "" matches any
	Table   string // its table; "" matches any
	N       int    // the statement's number in its session; 0 matches any
	Session string // the session; "" matches any

	// Persistent faults strike every matching statement until removed;
	// others strike once.
	Persistent bool

	// Err is what the handler sees; nil means ErrInjected.
	Err error

	// Rewrite, when set, turns the fault into a corruption instead of a
	// failure: it changes the arguments of the matching statement (When must
	// be Before) and lets it run. It stands for a bug between validation and
	// the database, such as a unit conversion that produces 0.
	Rewrite func(args []driver.NamedValue)

	// Cancel, when set, makes the fault the caller giving up: the
	// delivery's context is cancelled. On side After, the statement's
	// result stands and the handler's next call finds the context done. On
	// side Before, the caller gives up as the statement starts: it does not
	// run, and the handler gets Err, standing for what database/sql reports
	// then (for a COMMIT that lost the race with database/sql's own
	// rollback, sql.ErrTxDone).
	Cancel bool

	crash bool // kill the delivery instead (see Crash)
	spent bool
	fired int
}

// Fired returns how many statements the fault has struck. A sweep that moves
// a fault forward one statement at a time stops at the first position where
// it no longer fires: the delivery ran clean.
func (f *Fault) Fired() int { return f.fired }

// matches reports whether f strikes s on side w.
func (f *Fault) matches(w When, s *stmt) bool {
	return !f.spent && f.When == w &&
		(f.Op == "" || f.Op == s.Op) &&
		(f.Table == "" || f.Table == s.Table) &&
		(f.N == 0 || f.N == s.N) &&
		(f.Session == "" || f.Session == s.Session)
}

// String describes the fault for transcripts and failure messages.
func (f *Fault) String() string {
	what := "any statement"
	if f.Op != "" {
		what = string(f.Op)
		if f.Table != "" {
			what += " " + f.Table
		}
	}
	if f.N != 0 {
		what = fmt.Sprintf("statement %d", f.N)
	}
	kind := "one-shot fault"
	if f.Persistent {
		kind = "persistent fault"
	}
	if f.Rewrite != nil {
		kind = "argument rewrite"
	}
	if f.Cancel {
		kind = "cancellation"
	}
	return fmt.Sprintf("%s %s %s", kind, f.When, what)
}

// failure is the error the handler sees when f strikes s.
func (f *Fault) failure(s *stmt) error {
	if f.Err != nil {
		return f.Err
	}
	return fmt.Errorf("%w %s %s", ErrInjected, f.When, s)
}
