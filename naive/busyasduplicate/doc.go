// Package busyasduplicate answers "duplicate" when the database stays locked
// past the busy timeout, reasoning that another delivery must be handling the
// same event.
//
// It makes that answer where each database makes it wait. On SQLite that is
// BEGIN IMMEDIATE, which waits for the write lock up to busy_timeout and
// then fails with SQLITE_BUSY. On PostgreSQL BEGIN takes no lock and never
// waits; the INSERT does, for an inbox row another transaction holds, until
// lock_timeout ends it with 55P03 (or a cancel with 57014), and that is
// where this handler answers "duplicate". A serialization failure (40001)
// or a deadlock (40P01) is busy too, but it is retried as correct retries
// it: answering that one "duplicate" is naive/serialasduplicate's mistake.
//
// The mistake is described under BUGS (go doc ./naive/busyasduplicate).
//
// The fix: answer lab.ErrBusy, a temporary failure, so the provider retries
// later.
//
// Compare: diff -u correct/process.go naive/busyasduplicate/process.go
package busyasduplicate

// BUG(lab): a lock timeout proves nothing about the event. The lock may be
// held by a backup, a migration or another event; answering "duplicate" tells
// the provider to stop redelivering an event that was never applied, and the
// credit is lost (claim C15). Caught by LockTimeout on both databases,
// and by Property, whose stories deliver while the tables are locked.
