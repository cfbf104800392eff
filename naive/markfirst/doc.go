// Package markfirst records the event in the inbox and commits, then credits
// the account in a second statement.
//
// The mistake is described under BUGS (go doc ./naive/markfirst).
//
// The fix: one transaction for both, committed once, as in the correct
// variant; an error before COMMIT rolls the mark back too, so the retry
// applies.
//
// On PostgreSQL it makes the same mistake with the same code (correct's
// PostgresSchema, with postgres.DSN): the mark commits in one transaction, the
// credit runs after it on the pool. Caught there by Rollback and FaultSweep
// at every isolation level.
//
// Compare: diff -u correct/process.go naive/markfirst/process.go
package markfirst

// BUG(lab): the mark is committed before the effect. A failure between the
// two — an error from the UPDATE, a crash, a lost connection — leaves the
// event marked as processed with no credit. The provider redelivers, the
// handler finds the mark and answers "duplicate": the credit is lost for good
// (claims C4, C11). Caught by Rollback.
