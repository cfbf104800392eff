package lab

import (
	"context"
	"errors"
	"fmt"
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
// string. An error of none of these kinds is returned as it came: see
// Processor for what an error does and does not promise.
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
	// the caller's deadline passed, or (PostgreSQL, MariaDB) the transaction
	// lost a serialization check or a deadlock and was rolled back (see
	// Retryable). Nothing is known about the event: it is neither applied
	// nor a duplicate. Retry later.
	ErrBusy = errors.New("busy, retry later")
)

// SQLite's result codes that Classify tells apart. An extended code keeps its
// primary code in its low 8 bits (https://sqlite.org/rescode.html), so the
// whole busy family — SQLITE_BUSY (5), BUSY_RECOVERY (261), BUSY_SNAPSHOT
// (517), BUSY_TIMEOUT (773) — and the whole locked family (6 and its
// extensions) are recognised by their primary code.
const (
	sqliteBusy       = 5
	sqliteLocked     = 6
	sqliteCheck      = 275  // SQLITE_CONSTRAINT_CHECK
	sqliteForeignKey = 787  // SQLITE_CONSTRAINT_FOREIGNKEY
	sqliteNotNull    = 1299 // SQLITE_CONSTRAINT_NOTNULL
	sqliteDatatype   = 3091 // SQLITE_CONSTRAINT_DATATYPE: a STRICT column refused a lossy value
)

// sqliteError is what the lab needs of the SQLite driver's error type
// (modernc.org/sqlite's *sqlite.Error): its extended result code. Asking
// for the method instead of the type keeps this package, which every
// handler imports, free of any driver.
type sqliteError interface {
	error
	Code() int
}

// PostgreSQL's SQLSTATE codes that Classify tells apart
// (https://www.postgresql.org/docs/15/errcodes-appendix.html).
const (
	pgSerializationFailure = "40001" // could not serialize access
	pgDeadlockDetected     = "40P01"
	pgLockNotAvailable     = "55P03" // lock_timeout, or NOWAIT
	pgQueryCanceled        = "57014" // statement_timeout, or a cancel request
	pgForeignKey           = "23503"
	pgCheck                = "23514"
	pgNotNull              = "23502"
	pgNumericOutOfRange    = "22003"
)

// pgError is what the lab needs of a PostgreSQL driver's error type
// (pgx's *pgconn.PgError): its SQLSTATE. Like sqliteError, a method and
// not a type, so that no driver is imported here.
type pgError interface {
	error
	SQLState() string
}

// MariaDB's error numbers that Classify tells apart
// (https://mariadb.com/kb/en/mariadb-error-code-reference/). A duplicate
// key (1062) is not among them: a handler that lets it reach Classify did
// not handle its conflict, and it is never a duplicate answer.
const (
	myCheckRead       = 1020 // ER_CHECKREAD: record changed since last read (innodb_snapshot_isolation); transaction rolled back
	myBadNull         = 1048 // ER_BAD_NULL_ERROR
	myLockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT: only the statement was rolled back
	myLockDeadlock    = 1213 // ER_LOCK_DEADLOCK: the transaction was rolled back
	myInterrupted     = 1317 // ER_QUERY_INTERRUPTED: KILL QUERY; only the statement ended
	myStatementTime   = 1969 // ER_STATEMENT_TIMEOUT: max_statement_time; only the statement ended
	myOutOfRange      = 1264 // ER_WARN_DATA_OUT_OF_RANGE
	myDataTruncated   = 1265 // WARN_DATA_TRUNCATED, an error under a strict sql_mode
	myTruncatedValue  = 1366 // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	myDataTooLong     = 1406 // ER_DATA_TOO_LONG
	myNoReferencedRow = 1452 // ER_NO_REFERENCED_ROW_2: a foreign key refused the row
	myConstraintFail  = 4025 // ER_CONSTRAINT_FAILED: a CHECK refused the row
)

// mariadbError is what the lab needs of a MariaDB error: its error number.
// The driver's *mysql.MySQLError has it as a field, not a method, so
// package mariadb wraps it (mariadb.Wrap) in a type with this method; like
// sqliteError, an interface keeps this package free of the driver.
type mariadbError interface {
	error
	MySQLNumber() uint16
}

// Retryable reports whether err is a PostgreSQL serialization failure
// (40001) or deadlock (40P01), or a MariaDB deadlock (1213) or "record has
// changed since last read" (1020): the transaction was rolled back only
// because another one ran at the same time, and running it again from
// BEGIN is the prescribed answer. Such an error says nothing about the
// event: never a duplicate, never applied. A MariaDB lock wait timeout
// (1205) is not retryable: it rolled back only its statement, and the
// transaction must be rolled back before anything is tried again; nor
// are a statement ended by KILL QUERY (1317) or by max_statement_time
// (1969), for the same reason (mariadb.TestKillQuery).
func Retryable(err error) bool {
	var me mariadbError
	if errors.As(err, &me) {
		n := me.MySQLNumber()
		return n == myLockDeadlock || n == myCheckRead
	}
	var pe pgError
	if !errors.As(err, &pe) {
		return false
	}
	code := pe.SQLState()
	return code == pgSerializationFailure || code == pgDeadlockDetected
}

// Classify maps a database error to the kinds above, wrapping it so that both
// the kind and the original message survive. Errors it does not recognise come
// back unchanged, and so do errors already of a kind; nil stays nil.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrInvalidEvent) || errors.Is(err, ErrPayloadConflict) ||
		errors.Is(err, ErrUnknownAccount) || errors.Is(err, ErrBusy) {
		return err // classified already
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	var me mariadbError
	if errors.As(err, &me) {
		switch me.MySQLNumber() {
		case myLockDeadlock, myCheckRead, myLockWaitTimeout, myInterrupted, myStatementTime:
			return fmt.Errorf("%w: %w", ErrBusy, err)
		case myNoReferencedRow:
			return fmt.Errorf("%w: %w", ErrUnknownAccount, err)
		case myBadNull, myConstraintFail, myDataTooLong, myOutOfRange, myDataTruncated, myTruncatedValue:
			return fmt.Errorf("%w: refused by the schema: %w", ErrInvalidEvent, err)
		}
		return err
	}
	var pe pgError
	if errors.As(err, &pe) {
		switch pe.SQLState() {
		case pgSerializationFailure, pgDeadlockDetected, pgLockNotAvailable, pgQueryCanceled:
			return fmt.Errorf("%w: %w", ErrBusy, err)
		case pgForeignKey:
			return fmt.Errorf("%w: %w", ErrUnknownAccount, err)
		case pgCheck, pgNotNull, pgNumericOutOfRange:
			return fmt.Errorf("%w: refused by the schema: %w", ErrInvalidEvent, err)
		}
		return err
	}
	var se sqliteError
	if !errors.As(err, &se) {
		return err
	}
	code := se.Code()
	switch {
	case code&0xff == sqliteBusy, code&0xff == sqliteLocked:
		return fmt.Errorf("%w: %w", ErrBusy, err)
	case code == sqliteForeignKey:
		return fmt.Errorf("%w: %w", ErrUnknownAccount, err)
	case code == sqliteCheck, code == sqliteNotNull, code == sqliteDatatype:
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
