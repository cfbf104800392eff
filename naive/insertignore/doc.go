// Package insertignore is the correct handler on MariaDB, except that it
// writes the inbox row with INSERT IGNORE instead of INSERT … ON DUPLICATE
// KEY UPDATE source = source, and reads its "0 rows" as "seen before", as
// correct reads the upsert's. It is MariaDB's naive/insertorignore, with a
// wider blast radius: IGNORE turns the foreign key's refusal (1452) and a
// NOT NULL's (1048) into warnings and 0 rows too, and stores a key too
// long for its column cut short, 1 row. (A CHECK's refusal, 4025, stays an
// error.)
//
// It has no row on SQLite or PostgreSQL, which have no INSERT IGNORE.
//
// Compare: diff -u correct/mariadb.go naive/insertignore/mariadb.go
package insertignore

// BUG(lab): an event for an account that does not exist is not told
// apart from a repeat: INSERT IGNORE answers 0 rows, the handler looks for
// the stored row of a "duplicate", finds none, and answers an error of no
// kind (sql: no rows in result set) instead of "unknown account": a
// sender that retries other errors retries it forever, and one told
// nothing specific cannot tell the operator which account is missing.
// Caught by UnknownAccount at every level.
