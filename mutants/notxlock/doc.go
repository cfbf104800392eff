// Package notxlock is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	DSN without `_txlock=immediate` (plain BEGIN, INSERT first)
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/notxlock/schema.go
package notxlock
