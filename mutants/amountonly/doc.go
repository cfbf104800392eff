// Package amountonly is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	payload comparison on the amount only
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/amountonly/process.go
package amountonly
