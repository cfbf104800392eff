package lab

import (
	"context"
	"database/sql"
)

// Processor handles one delivery of an event. It answers Applied or
// Duplicate, or an error whose kind (ErrInvalidEvent, ErrPayloadConflict,
// ErrUnknownAccount, ErrBusy) is checked with errors.Is.
//
// An error promises less than it seems. It means the handler could not
// confirm the event, not that nothing happened: a failure reported by COMMIT
// itself, or one that strikes after COMMIT has reached the disk, comes back
// as an error although the event is applied. That is why a correct handler
// must make the sender's retry safe: the retry of such an event answers
// Duplicate (the FaultSweep and Crash scenarios show both cases). What an
// error does promise, from a correct handler, is that nothing was committed
// by halves: the inbox row and the credit are both there, or neither is.
type Processor interface {
	Process(ctx context.Context, e Event) (Outcome, error)
}

// Variant describes one implementation to the lab: the correct one or a naive
// one. Each variant package exports one, so that the scenarios can run them
// all without knowing their code.
type Variant struct {
	// Name is the package path below the module root: "correct",
	// "naive/checkthenact".
	Name string
	// Mistake is the one-line name of what the variant does wrong; "" for
	// the correct variant.
	Mistake string
	// Schema creates the tables accounts and inbox. It runs once, on its own
	// connection, before the handler opens the database.
	Schema string
	// DSN returns the connection string for the database file at path, with
	// the variant's connection settings (foreign keys, lock mode, busy timeout).
	DSN func(path string) string
	// New returns the handler over an opened database.
	New func(db *sql.DB) Processor
	// Postgres describes the variant on PostgreSQL, or is nil when it has
	// no row in the PostgreSQL matrices: its mistake has no analogue there,
	// the analogue is no mistake there, or a scenario cannot be set up on
	// its schema. Its package doc says which, and why (TestRegistry checks
	// that it says something).
	Postgres *Postgres
	// MariaDB describes the variant on MariaDB (InnoDB), or is nil when it
	// has no row in the MariaDB matrices, for the same reasons as Postgres.
	MariaDB *MariaDB
}

// Postgres is what a variant needs to run on PostgreSQL: its schema in
// PostgreSQL's dialect, its connection settings, and, when the SQLite
// handler cannot serve both databases, a handler of its own.
type Postgres struct {
	// Schema creates the tables accounts and inbox, unqualified: the lab
	// runs it with a search_path of its own.
	Schema string
	// DSN returns the connection string for the lab's database at server
	// (a postgres:// URL whose query already holds the lab's settings),
	// with the variant's connection settings added as run-time parameters:
	// default_transaction_isolation = level, lock_timeout,
	// statement_timeout. Timeouts belong on the server: pgx answers a
	// cancelled context by closing the connection.
	DSN func(server string, level Isolation) string
	// New returns the handler over an opened database; nil means the
	// variant's New serves PostgreSQL too.
	New func(db *sql.DB) Processor
}

// MariaDB is what a variant needs to run on MariaDB (InnoDB): its schema
// in MariaDB's dialect, its connection settings, and its handler, since
// the SQLite and PostgreSQL handlers' $1 placeholders are not MariaDB's.
type MariaDB struct {
	// Schema creates the tables accounts and inbox, unqualified, one
	// statement per element: the driver runs one statement per call.
	Schema []string
	// DSN returns the connection string (a go-sql-driver/mysql DSN) for the
	// lab's database at server, with the variant's connection settings:
	// the isolation level as the session's tx_isolation, the lock wait and
	// statement timeouts.
	DSN func(server string, level Isolation) string
	// New returns the handler over an opened database; nil means the
	// variant's New serves MariaDB too.
	New func(db *sql.DB) Processor
}

// Isolation is a transaction isolation level, spelled as PostgreSQL's
// default_transaction_isolation takes it; mariadb.Level spells it as
// MariaDB's tx_isolation does.
type Isolation string

// The isolation levels the lab runs every PostgreSQL and MariaDB variant at.
// (PostgreSQL runs READ UNCOMMITTED as READ COMMITTED.)
const (
	ReadCommitted  Isolation = "read committed"
	RepeatableRead Isolation = "repeatable read"
	Serializable   Isolation = "serializable"
)

// Isolations are the levels in the order of the matrix's backend axis.
var Isolations = []Isolation{ReadCommitted, RepeatableRead, Serializable}

// Correct reports whether v is the correct variant, the one held to every
// scenario's standard in every mode.
func (v Variant) Correct() bool { return v.Mistake == "" }
