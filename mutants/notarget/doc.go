// Package notarget is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	ON CONFLICT without a target
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/notarget/process.go
package notarget
