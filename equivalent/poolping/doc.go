// Package poolping is package correct that runs a harmless statement,
// SELECT 1, on the pool before it begins its transaction.
//
// It is equivalent because that statement reads nothing and decides
// nothing: it runs on a connection of the pool outside any transaction,
// takes no lock that outlives it, and the transaction that follows is
// correct's, statement for statement. A check that rejects it judges how
// long a delivery takes, not what it does.
//
// Compare: diff -u correct/process.go equivalent/poolping/process.go
package poolping
