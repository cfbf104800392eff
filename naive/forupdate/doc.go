// Package forupdate is checkthenacttx with the check written as SELECT …
// FOR UPDATE, in the belief that the lock keeps a second delivery out. It
// locks the rows it finds; the row of an event not yet seen does not
// exist, so there is nothing to lock. (SQLite has no FOR UPDATE: this
// variant runs on PostgreSQL only.)
//
// Compare: diff -u naive/checkthenacttx/process.go naive/forupdate/process.go
package forupdate

// BUG(lab): SELECT … FOR UPDATE locks no row that does not exist yet. At
// READ COMMITTED two deliveries both find nothing, both credit, and the
// second INSERT … DO NOTHING inserts nothing: a double credit. At
// REPEATABLE READ and SERIALIZABLE the second INSERT fails with 40001 and
// the retry answers duplicate. Caught by Race and Concurrent at READ
// COMMITTED.
