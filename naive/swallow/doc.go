// Package swallow logs an error from the credit and carries on.
//
// The mistake is described under BUGS (go doc ./naive/swallow).
//
// The fix: return the error; the deferred Rollback undoes the inbox row.
//
// On PostgreSQL it makes the same mistake with the same code (correct's
// PostgresSchema, with postgres.DSN). Caught there by Rollback and FaultSweep at
// every isolation level.
//
// Compare: diff -u correct/process.go naive/swallow/process.go
package swallow

// BUG(lab): the error is caught and not returned, so the transaction commits
// what it has: the inbox row without the credit, and the answer "applied".
// The redelivery is then a "duplicate", and the money is gone (claim C12).
// Catch an error only to roll back, then return it. Caught by Rollback.
