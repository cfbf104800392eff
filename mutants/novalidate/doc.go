// Package novalidate is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	the `e.Validate()` call removed
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/novalidate/process.go
package novalidate
