// Package checkthenacttx asks "have we seen this event?" with a SELECT
// inside the transaction, and if not, inserts it with ON CONFLICT DO
// NOTHING and credits the account, without looking at whether the INSERT
// inserted anything: the SELECT already decided.
//
// On SQLite that is correct: BEGIN IMMEDIATE takes the write lock before
// the SELECT, so two deliveries never both read "not seen". On PostgreSQL
// and MariaDB there is no such lock, and the isolation level decides. On
// MariaDB (mariadb.go, with INSERT … ON DUPLICATE KEY UPDATE) the SELECT
// reads the transaction's snapshot and the INSERT the present, so
// REPEATABLE READ does not save it as it does on PostgreSQL; SERIALIZABLE
// (whose SELECT locks the gap, so the race becomes a deadlock) and
// REPEATABLE READ with innodb_snapshot_isolation=ON (whose INSERT of a
// row committed since the snapshot fails with 1020) do, through the retry.
//
// Compare: diff -u correct/process.go naive/checkthenacttx/process.go
package checkthenacttx

// BUG(lab): check-then-act inside one transaction. At READ COMMITTED two
// deliveries both read "not seen"; the second INSERT waits for the first,
// then does nothing, and its credit goes through: a double credit. At
// REPEATABLE READ and SERIALIZABLE the second INSERT fails with 40001
// instead, and the retry answers duplicate: the same code is correct
// there. Caught by Race and Concurrent at READ COMMITTED. On MariaDB the
// double credit happens at REPEATABLE READ too: the SELECT read an old
// snapshot, and ON DUPLICATE KEY UPDATE changes nothing without an error.
// At SERIALIZABLE the two SELECTs' gap locks make the INSERTs deadlock
// (1213), and with innodb_snapshot_isolation=ON the second INSERT fails
// with 1020; both roll back, and the retry answers duplicate. On MariaDB,
// caught by Race, ConflictRace and Concurrent at READ COMMITTED and
// REPEATABLE READ.
