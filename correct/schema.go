package correct

import "idemlab/lab"

// Schema creates the two tables. STRICT makes SQLite refuse a value that
// does not convert to the column's type without loss (2.5 or 'ten' into an
// INTEGER column, a sum that overflowed into a REAL: error 3091), which a
// plain table would store as it came; a value that converts without loss is
// still converted ('10' is stored as 10). NOT NULL keeps NULL out of every
// column. For the PRIMARY KEY's columns a STRICT table would do that anyway
// (error 1299), where a plain table takes NULL keys, which never conflict
// with each other; for account_id, amount and balance only NOT NULL does,
// since the foreign key and the CHECKs let a NULL through (a NULL reference
// is not looked up, and a CHECK fails only when false). The CHECKs repeat
// the limits of lab.Event.Validate as the last line of defence, in its
// units: a key's length in bytes (octet_length), not in characters
// (length), so that 64 two-byte characters and one more byte are refused
// as Validate refuses them.
const Schema = `
CREATE TABLE accounts (
	id      INTEGER PRIMARY KEY,
	balance INTEGER NOT NULL DEFAULT 0
	        CHECK (balance BETWEEN 0 AND 1000000000000000)
) STRICT;

CREATE TABLE inbox (
	source     TEXT    NOT NULL CHECK (octet_length(source) BETWEEN 1 AND 128),
	event_id   TEXT    NOT NULL CHECK (octet_length(event_id) BETWEEN 1 AND 128),
	account_id INTEGER NOT NULL REFERENCES accounts (id),
	amount     INTEGER NOT NULL CHECK (amount BETWEEN 1 AND 1000000000),
	PRIMARY KEY (source, event_id)
) STRICT;
`

// DSN returns the connection string for the database file at path. Every
// setting is per connection, so it belongs in the DSN, which database/sql
// applies to each connection it opens:
//
//   - foreign_keys(1): SQLite checks REFERENCES only when asked, per
//     connection;
//   - busy_timeout(5000): wait up to 5 s for the write lock, then fail with
//     SQLITE_BUSY;
//   - _txlock=immediate: every transaction starts with BEGIN IMMEDIATE and
//     takes the write lock before it reads.
//
// lab.SQLiteFile escapes the path: the DSN is a URI, where a '?' would
// start the settings, a '#' end them, a '%' begin an escape and a leading
// "//" a host name, so an unescaped file name holding one would open
// another file, or this one without the settings.
func DSN(path string) string {
	return lab.SQLiteFile(path) + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_txlock=immediate"
}
