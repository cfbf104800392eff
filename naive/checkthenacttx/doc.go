// Package checkthenacttx asks "have we seen this event?" with a SELECT
// inside the transaction, and if not, inserts it with ON CONFLICT DO
// NOTHING and credits the account, without looking at whether the INSERT
// inserted anything: the SELECT already decided.
//
// On SQLite that is correct: BEGIN IMMEDIATE takes the write lock before
// the SELECT, so two deliveries never both read "not seen". On PostgreSQL
// there is no such lock, and the isolation level decides.
//
// Compare: diff -u correct/process.go naive/checkthenacttx/process.go
package checkthenacttx

// BUG(lab): check-then-act inside one transaction. At READ COMMITTED two
// deliveries both read "not seen"; the second INSERT waits for the first,
// then does nothing, and its credit goes through: a double credit. At
// REPEATABLE READ and SERIALIZABLE the second INSERT fails with 40001
// instead, and the retry answers duplicate: the same code is correct
// there. Caught by Race and Concurrent at READ COMMITTED.
