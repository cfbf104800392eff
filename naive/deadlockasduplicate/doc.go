// Package deadlockasduplicate is the correct handler on MariaDB, except
// for what it makes of a deadlock (1213) on its credit: where correct
// returns it, busy and retryable, for mariadb.Retry to run the delivery
// again, this one answers "duplicate", reasoning that a lock fight over
// the account means another delivery of the same event got there first.
// It is MariaDB's naive/serialasduplicate.
//
// It has no row on SQLite, where a credit cannot deadlock, nor on
// PostgreSQL, where the inbox row's foreign key takes FOR KEY SHARE on the
// account, which does not conflict with the credit's UPDATE.
//
// Compare: diff -u correct/mariadb.go naive/deadlockasduplicate/mariadb.go
package deadlockasduplicate

// BUG(lab): a deadlock on the credit is answered "duplicate". It proves
// nothing about the event: on MariaDB two different events for one
// account deadlock (each inbox row's foreign key share-locks the account,
// and each credit waits for the other's shared lock), InnoDB rolls one
// back, and this handler answers it "duplicate": the provider stops
// retrying an event that was never applied. Caught by DistinctRace and
// DeadlockRace at every level.
