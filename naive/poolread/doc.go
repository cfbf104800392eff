// Package poolread is package correct that also checks, on the pool and
// outside its transaction, that the account exists, while the transaction
// is open.
//
// The mistake is described under BUGS (go doc ./naive/poolread).
//
// The fix: read on the transaction (tx.QueryRowContext), or not at all: the
// foreign key already refuses an unknown account inside the transaction.
//
// With a pool of many connections the read is harmless: it runs on another
// connection, takes only a read lock for its own statement (which a write
// transaction in rollback-journal mode does not block before COMMIT, and
// WAL never blocks), and decides nothing the transaction does not decide
// again. Every column that runs the handler on such a pool holds; only
// PoolOfOne, which runs it the way correct's doc recommends, catches it.
//
// It has no row in the PostgreSQL matrices, which run every handler on a
// pool of many connections: there its read would be harmless, as above.
//
// Compare: diff -u correct/process.go naive/poolread/process.go
package poolread

// BUG(lab): the handler needs a second connection while its transaction
// holds one. Given a pool of one connection, the configuration correct's
// doc recommends for SQLite, the read waits for a connection that only its
// own delivery can give back, so every delivery waits for itself until the
// caller's deadline and answers busy; without a deadline it never answers
// (claim C16). Caught by PoolOfOne.
