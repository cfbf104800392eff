// Package poolping is package correct that runs harmless statements on the
// pool before it begins its transaction: SELECT 1, a PRAGMA query, and a
// read of the account's balance.
//
// It is equivalent because those statements decide nothing: each runs on
// a connection of the pool outside any transaction, takes no lock that
// outlives it, and its result is not used; the transaction that follows is
// correct's, statement for statement. On a pool of one connection they run
// before the transaction takes it, so nothing waits for itself. A check
// that rejects it judges how long a delivery takes, or how many statements
// it runs, not what it does.
//
// Compare: diff -u correct/process.go equivalent/poolping/process.go
package poolping
