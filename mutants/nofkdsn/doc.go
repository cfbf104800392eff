// Package nofkdsn is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	DSN without `_pragma=foreign_keys(1)`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/nofkdsn/schema.go
package nofkdsn
