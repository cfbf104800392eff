// Package nofk switches foreign keys on with a PRAGMA in its setup script
// instead of in the DSN.
//
// The mistake is described under BUGS (go doc ./naive/nofk).
//
// The fix: _pragma=foreign_keys(1) in the DSN, so that every connection the
// pool opens has it.
//
// It has no PostgreSQL analogue, and no row in the PostgreSQL matrices:
// PostgreSQL checks every foreign key on every connection, with no setting
// a connection must remember to turn on. What SQLite leaves to each
// connection PostgreSQL keeps in the schema, so the mistake cannot be
// made by forgetting.
//
// Compare: diff -u correct/schema.go naive/nofk/schema.go
package nofk

// BUG(lab): PRAGMA foreign_keys is a setting of one connection, not of the
// database file. The setup connection enforced REFERENCES; the handler's
// connections, opened later by database/sql, do not. The handler's own
// check still refuses an event for a missing account (its credit changes
// no row), so the lesson shows where only the schema stands guard: when a
// bug hands the INSERT another account than the one credited, the inbox
// keeps a row for an account that does not exist, and a credit without its
// row is committed (claim C7). Caught by SchemaGuards.
