// Package serialasduplicate is the correct handler on PostgreSQL, except
// for what it makes of a serialization failure: where correct runs the
// delivery again, this one answers "duplicate", reasoning that another
// delivery must have got there first.
//
// On SQLite, and at READ COMMITTED, no serialization failure arises and it
// is the correct handler. At REPEATABLE READ and SERIALIZABLE a 40001 says
// only that another transaction touched the same rows — the same event, or
// another event for the same account.
//
// Compare: diff -u postgres/retry.go naive/serialasduplicate/retry.go
package serialasduplicate

// BUG(lab): a serialization failure (40001) is answered as "duplicate".
// It proves nothing about the event: two different events for one account
// at REPEATABLE READ or SERIALIZABLE make the second fail with 40001, and
// this handler drops it as a duplicate; a conflicting payload racing the
// first is answered "duplicate" instead of a conflict. Caught by
// DistinctRace and ConflictRace at REPEATABLE READ and SERIALIZABLE.
