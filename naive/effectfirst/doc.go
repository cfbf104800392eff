// Package effectfirst checks the inbox, credits the account and commits, and
// only then records the event.
//
// The mistake is described under BUGS (go doc ./naive/effectfirst).
//
// The fix: the mark and the effect in one transaction, the mark's primary key
// deciding, as in the correct variant.
//
// On PostgreSQL it makes the same mistake with the same code, and correct's
// schema (PostgresSchema) and the shared postgres.DSN and postgres.Retry: the
// races and FaultSweep catch it at every isolation level, and LockTimeout
// too, because its credit is committed before its inbox row waits.
//
// Compare: diff -u correct/process.go naive/effectfirst/process.go
package effectfirst

// BUG(lab): the effect is committed before the mark. A failure between the
// two leaves a credit with no record of the event; the redelivery finds no
// mark and credits again (claims C4, C13). The gap between the two commits
// is also a window in which a concurrent delivery finds no mark. Caught by
// FaultSweep, Crash and Race.
