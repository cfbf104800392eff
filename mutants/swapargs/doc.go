// Package swapargs is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	UPDATE arguments swapped: amount and account id
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/swapargs/process.go
package swapargs
