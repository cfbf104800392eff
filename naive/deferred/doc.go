// Package deferred starts its transactions with a plain BEGIN and, sensibly
// enough, checks that the account exists before writing.
//
// The mistake is described under BUGS (go doc ./naive/deferred).
//
// The fix: _txlock=immediate in the DSN, so that every transaction takes the
// write lock at BEGIN and waiting for it is covered by busy_timeout. The read
// itself is harmless then.
//
// It has no PostgreSQL analogue, and no row in the PostgreSQL matrices.
// Every PostgreSQL BEGIN is like SQLite's DEFERRED: it takes no lock, and
// each statement takes the row locks it needs when it runs. A statement
// that needs a row another transaction holds waits for it, up to
// lock_timeout; there is no lock to upgrade and so no upgrade refused at
// once. Its code there would be correct's with one more read before the
// INSERT, a plain SELECT, which locks no row.
//
// Compare: diff -u correct/process.go naive/deferred/process.go
package deferred

// BUG(lab): a DEFERRED transaction takes no lock until it needs one. After
// its first read it holds a SHARED lock; when it then wants to write while
// another transaction already holds the write lock, SQLite cannot make it
// wait (the two could deadlock) and fails the statement at once with
// SQLITE_BUSY, whatever the busy timeout. (In WAL mode it also fails at once,
// with SQLITE_BUSY_SNAPSHOT, 517, when another transaction has committed
// since its read, even if none holds the lock now.) Under concurrency some
// deliveries of a valid event get a busy error instead of "duplicate"
// (claim C14). Caught by Race and Concurrent.
