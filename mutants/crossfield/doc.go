// Package crossfield is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	the stored amount compared with the delivery's account id
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/crossfield/process.go
package crossfield
