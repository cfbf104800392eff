// Package amountzero is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	amount CHECK `BETWEEN 1` → `BETWEEN 0`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/amountzero/schema.go
package amountzero
