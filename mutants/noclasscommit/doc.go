// Package noclasscommit is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	lab.Classify dropped on the COMMIT error path
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/noclasscommit/process.go
package noclasscommit
