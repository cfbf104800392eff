// Package plainbegin is package correct with a plain BEGIN (DEFERRED)
// instead of BEGIN IMMEDIATE: its DSN has no _txlock.
//
// It is equivalent because the first statement of every transaction is the
// INSERT into the inbox, a write. A DEFERRED transaction that writes before
// it reads asks for the write lock at that first statement, and waiting for
// it is covered by busy_timeout exactly as BEGIN IMMEDIATE's wait is (SQLite
// refuses to wait only when a transaction that already holds a read lock
// wants to upgrade it; see naive/deferred). So no two deliveries both decide
// "not seen yet", and contention is waited out, never failed at once. The
// article's point (claim C32): IMMEDIATE is one way to get the write lock
// first, not the only one.
//
// On PostgreSQL there is nothing for it to differ in: every BEGIN is plain
// there (PostgreSQL has no IMMEDIATE; a transaction takes row locks as its
// statements run), and correct already runs on PostgreSQL with a plain
// BEGIN. So it has no row of its own in the PostgreSQL matrices: the row
// would be correct's, statement for statement.
//
// Compare: diff -u correct/schema.go equivalent/plainbegin/schema.go (in
// process.go only the comment on BeginTx differs: it says what BEGIN is here).
package plainbegin
