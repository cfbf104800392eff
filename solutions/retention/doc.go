// Package retention is the reference solution of the retention exercise:
// the handler of the starting point is kept as it is, and Purge deletes
// only the rows whose redelivery window has closed.
package retention
