// Package poolread is package correct that also checks, on the pool and
// outside its transaction, that the account exists, while the transaction
// is open.
//
// It is equivalent because that read is harmless: it runs on another
// connection of the pool, takes only a read lock for its own statement
// (which a write transaction in rollback-journal mode does not block before
// COMMIT, and WAL never blocks), and decides nothing the transaction does
// not decide again: the foreign key still refuses an unknown account inside
// the transaction. It costs a second connection per delivery, which is
// slower, not wrong.
//
// Compare: diff -u correct/process.go equivalent/poolread/process.go
package poolread
