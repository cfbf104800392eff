// Package postgres holds what every handler of the kit needs to run on
// PostgreSQL and that is never a lesson: the connection string with the
// handler's settings (DSN), and the retry PostgreSQL prescribes for a
// transaction it rolled back because another ran beside it (Retry, which
// follows the Policy UntilDeadline; docs/performance.md measures it
// against the others).
//
// The correct handler and the naive ones share it, so a variant's diff
// against correct/ shows its mistake and nothing else. The one variant
// whose mistake is in the retry, naive/serialasduplicate, keeps a copy of
// its own; compare:
//
//	diff -u postgres/retry.go naive/serialasduplicate/retry.go
package postgres
