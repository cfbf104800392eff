package lab

import (
	"context"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Outcome is a handler's answer for an event it accepted.
type Outcome int

// The two successful answers. Every other result is an error.
const (
	// Applied: this delivery changed the balance.
	Applied Outcome = iota + 1
	// Duplicate: an identical event was applied before; nothing changed now.
	Duplicate
)

// String returns "applied" or "duplicate".
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// The error kinds a handler answers with. Check them with errors.Is, never by
// string. An error of none of these kinds is returned as it came and means that
// nothing was committed.
var (
	// ErrInvalidEvent: the event was rejected before any SQL ran, or a schema
	// constraint (CHECK, NOT NULL, STRICT type) refused it. Retrying the same
	// event cannot help.
	ErrInvalidEvent = errors.New("invalid event")
	// ErrPayloadConflict: an event with this key was applied before with a
	// different account or amount. It is a broken contract, not a repeat.
	ErrPayloadConflict = errors.New("payload conflict")
	// ErrUnknownAccount: the account does not exist (the foreign key refused
	// the inbox row).
	ErrUnknownAccount = errors.New("unknown account")
	// ErrBusy: the database was locked for longer than the busy timeout, or
	// the caller's deadline passed. Nothing is known about the event: it is
	// neither applied nor a duplicate. Retry later.
	ErrBusy = errors.New("busy, retry later")
)

// Classify maps a database error to the kinds above, wrapping it so that both
// the kind and the original message survive. Errors it does not recognise come
// back unchanged; nil stays nil.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_BUSY_SNAPSHOT, sqlite3.SQLITE_BUSY_TIMEOUT,
		sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_LOCKED_SHAREDCACHE:
		return fmt.Errorf("%w: %w", ErrBusy, err)
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("%w: %w", ErrUnknownAccount, err)
	case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL,
		sqlite3.SQLITE_CONSTRAINT_DATATYPE:
		return fmt.Errorf("%w: refused by the schema: %w", ErrInvalidEvent, err)
	}
	return err
}

// ErrorKind names the kind of err for transcripts and reports: "invalid
// event", "payload conflict", "unknown account", "busy", or "other error".
func ErrorKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrInvalidEvent):
		return "invalid event"
	case errors.Is(err, ErrPayloadConflict):
		return "payload conflict"
	case errors.Is(err, ErrUnknownAccount):
		return "unknown account"
	case errors.Is(err, ErrBusy):
		return "busy"
	}
	return "other error"
}
