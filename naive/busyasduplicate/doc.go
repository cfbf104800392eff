// Package busyasduplicate answers "duplicate" when the database stays locked
// past the busy timeout, reasoning that another delivery must be handling the
// same event.
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
// credit is lost (article C15). Caught by LockTimeout.
