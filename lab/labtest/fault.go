package labtest

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ErrInjected is the error an injected fault returns, unless the fault names
// another. A handler should pass it up as it is: it is neither a duplicate nor
// a reason to commit.
var ErrInjected = errors.New("injected fault")

// ErrPanicked is what the answer of a delivery whose handler panicked at
// an injected panic (Fault.Panic) wraps: the lab recovers the panic and
// the process goes on, as net/http's server does with a handler's (it logs
// it and closes the request's connection; the sender redelivers).
var ErrPanicked = errors.New("handler panicked")

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

	// Panic, when set, makes the fault a panic of the handler's own code
	// next to the matching statement, between two calls to the database:
	// on side Before the statement does not run, on side After its result
	// is lost. The panic unwinds the handler, running its deferred calls
	// (a deferred Rollback among them), and the lab recovers it as the
	// delivery's answer, an error wrapping ErrPanicked: one delivery's
	// panic does not end the process.
	//
	// A panic strikes only statements run as database/sql Exec calls.
	// database/sql unwinds those cleanly (execDC releases the connection in
	// a deferred call), but not the others: its query path (queryDC)
	// releases a transaction's read lock only on return, so that a panic
	// inside a query left the transaction's Rollback waiting forever, and a
	// panic inside the driver's Commit left the transaction marked done
	// with its connection never returned to the pool. Those are a panicking
	// driver, not a panicking handler.
	Panic bool

	crash bool // kill the delivery instead (see crash)
	spent bool
	fired int

	// What the engine's check of faults that never fired (Run.Close)
	// needs: how many statements it matched (a rewrite fires only on
	// those whose arguments it changed), the Go types of the arguments of
	// the first statement a rewrite matched and left alone, whether the
	// scenario asked Fired, and the run's failures when it was injected.
	matched   int
	untouched string
	asked     bool
	before    int
}

// Fired returns how many statements the fault has struck; a Rewrite
// strikes only a statement whose arguments it changed. A sweep that moves
// a fault forward one statement at a time stops at the first position
// where it no longer fires: the delivery ran clean.
//
// A scenario that asks is the judge of a fault that did not fire, as such
// a sweep is. Every fault it never asks about is one it means to fire:
// when the run closes, one that has not fired makes the run neutral (see
// Run.neutralReason), since what the scenario expected assumed it struck.
func (f *Fault) Fired() int {
	f.asked = true
	return f.fired
}

// strike records that f matched a statement, and spends it if it is
// one-shot. A failure, a cancellation or a crash fires as it matches; a
// Rewrite fires once it has changed an argument (rewrite).
func (f *Fault) strike() {
	f.spent = !f.Persistent
	f.matched++
	if f.Rewrite == nil {
		f.fired++
	}
}

// rewrite applies f.Rewrite to the arguments of a statement f matched, and
// reports whether it changed one: only then has the fault fired. A
// rewrite that looks for int64(500) finds nothing in a handler that binds
// the amount as a string, or (on PostgreSQL, whose driver passes values
// through as they are) as an int32.
func (f *Fault) rewrite(args []driver.NamedValue) bool {
	was := make([]any, len(args))
	for i, a := range args {
		was[i] = a.Value
	}
	f.Rewrite(args)
	for i, a := range args {
		if !reflect.DeepEqual(was[i], a.Value) {
			f.fired++
			return true
		}
	}
	if f.untouched == "" {
		types := make([]string, len(was))
		for i, v := range was {
			types[i] = fmt.Sprintf("%T", v)
		}
		f.untouched = strings.Join(types, ", ")
	}
	return false
}

// meant reports whether the scenario means f to fire, so that a run in
// which it did not cannot judge the handler: every fault but one whose
// Fired the scenario asked (it judges that case itself) and a crash (Crash
// reports whether it killed).
func (f *Fault) meant() bool { return !f.asked && !f.crash }

// target names the statements f strikes, as a scenario means them:
// "before the UPDATE of accounts", "after statement 3", "before the
// COMMIT of session A".
func (f *Fault) target() string {
	what := "any statement"
	switch {
	case f.N != 0:
		what = fmt.Sprintf("statement %d", f.N)
		if f.Op != "" {
			what += " (" + string(f.Op) + ")"
		}
	case f.Op != "":
		what = "the " + string(f.Op)
		if f.Table != "" {
			what += map[Op]string{OpInsert: " into ", OpSelect: " from ", OpDelete: " from "}[f.Op]
			if !strings.HasSuffix(what, " ") {
				what += " of "
			}
			what += f.Table
		}
	}
	if f.Session != "" {
		what += " of session " + f.Session
	}
	return f.When.String() + " " + what
}

// kind names what f does: "fault", "argument rewrite", "cancellation".
func (f *Fault) kind() string {
	switch {
	case f.Rewrite != nil:
		return "argument rewrite"
	case f.Cancel:
		return "cancellation"
	case f.crash:
		return "crash"
	case f.Panic:
		return "panic"
	}
	return "fault"
}

// unfired says why f, which the scenario meant to fire, never did, and
// what the session it was meant for did instead: answered is that
// session's answer, or "" when f names no session or the session did not
// answer.
func (f *Fault) unfired(answered string) string {
	head := fmt.Sprintf("the %s '%s' never fired: ", f.kind(), f.target())
	if f.matched > 0 && f.Rewrite != nil {
		return head + fmt.Sprintf("it matched the handler's statement but none of its arguments, bound as %s: "+
			"the handler binds a value as another Go type than the rewrite looks for", f.untouched)
	}
	who := "the handler"
	if f.Session != "" {
		who = "session " + f.Session
	}
	why := head + who + " ran no such statement"
	if answered != "" {
		why += "; it answered " + answered
	}
	return why
}

// matches reports whether f strikes s on side w.
func (f *Fault) matches(w When, s *stmt) bool {
	return !f.spent && f.When == w &&
		(f.Op == "" || f.Op == s.Op) &&
		(f.Table == "" || f.Table == s.Table) &&
		(f.N == 0 || f.N == s.N) &&
		(f.Session == "" || f.Session == s.Session) &&
		(!f.Panic || s.exec)
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
	if f.Panic {
		kind = "panic"
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

// injectedPanic is the value an injected panic (Fault.Panic) panics with:
// the error the delivery's answer becomes once the lab recovers it.
type injectedPanic struct{ err error }

func (p injectedPanic) Error() string { return p.err.Error() }
func (p injectedPanic) Unwrap() error { return p.err }

// panicking is the value the handler panics with when f strikes s.
func (f *Fault) panicking(s *stmt) injectedPanic {
	return injectedPanic{fmt.Errorf("%w: injected panic %s %s", ErrPanicked, f.When, s)}
}
