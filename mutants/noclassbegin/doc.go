// Package noclassbegin is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	lab.Classify dropped on the BEGIN error path
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/noclassbegin/process.go
package noclassbegin
