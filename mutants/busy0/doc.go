// Package busy0 is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	DSN busy_timeout(5000) → busy_timeout(0)
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/busy0/schema.go
package busy0
