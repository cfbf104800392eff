// Package forupdate is checkthenacttx with the check written as SELECT …
// FOR UPDATE, in the belief that the lock keeps a second delivery out. It
// locks the rows it finds; the row of an event not yet seen does not
// exist, so there is nothing to lock. (SQLite has no FOR UPDATE: this
// variant runs on PostgreSQL and MariaDB only.)
//
// On MariaDB (InnoDB, mariadb.go) FOR UPDATE at REPEATABLE READ and
// SERIALIZABLE locks the gap where the row would go, and both deliveries
// hold that gap at once: gap locks do not conflict with each other. Each
// INSERT then waits for the other's gap lock, InnoDB rolls one back with
// a deadlock (1213), and the handler's answer to it decides the verdict:
// this one returns it, busy and retryable, and mariadb.Retry runs the
// delivery again, which finds the row: duplicate.
//
// Compare: diff -u naive/checkthenacttx/process.go naive/forupdate/process.go
// (and naive/checkthenacttx/mariadb.go with naive/forupdate/mariadb.go)
package forupdate

// BUG(lab): SELECT … FOR UPDATE locks no row that does not exist yet. At
// READ COMMITTED two deliveries both find nothing, both credit, and the
// second INSERT … DO NOTHING inserts nothing: a double credit. At
// REPEATABLE READ and SERIALIZABLE the second INSERT fails with 40001 and
// the retry answers duplicate. Caught by Race and Concurrent at READ
// COMMITTED. On MariaDB the same at READ COMMITTED, where InnoDB takes no
// gap locks and the second INSERT … ON DUPLICATE KEY UPDATE changes
// nothing; at REPEATABLE READ and SERIALIZABLE the gap lock both hold
// makes the race a deadlock on INSERT, which the retry answers duplicate.
// On MariaDB, caught by Race, ConflictRace and Concurrent at READ
// COMMITTED.
