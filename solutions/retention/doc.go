// Package retention is the reference solution of the retention exercise:
// the handler is the starting point's, copied so that the solution stands
// on its own whatever state the exercise is in, and Purge deletes only the
// rows whose redelivery window has closed.
package retention
