// Package effectfirst checks the inbox, credits the account and commits, and
// only then records the event.
//
// The mistake is described under BUGS (go doc ./naive/effectfirst).
//
// The fix: the mark and the effect in one transaction, the mark's primary key
// deciding, as in the correct variant.
//
// On PostgreSQL it makes the same mistake with the same code (PostgresSchema
// and PostgresDSN are correct's): FaultSweep and the races caught it at
// every isolation level. It has no row in the PostgreSQL matrices yet,
// because its races at SERIALIZABLE did not replay identically: in the
// third iteration of a -count=20 run, an interleaving's replay found a
// session at another step than the first run had (its second write runs outside the
// transaction, on whichever pooled connection is free, and SERIALIZABLE's
// conflict detection may depend on that connection's cached plan; not yet
// shown).
//
// Compare: diff -u correct/process.go naive/effectfirst/process.go
package effectfirst

// BUG(lab): the effect is committed before the mark. A failure between the
// two leaves a credit with no record of the event; the redelivery finds no
// mark and credits again (article C4, C13). The gap between the two commits
// is also a window in which a concurrent delivery finds no mark. Caught by
// FaultSweep, Crash and Race.
