// Package gezero is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`inserted == 1` → `inserted >= 0`: every delivery credits
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/gezero/process.go
package gezero
