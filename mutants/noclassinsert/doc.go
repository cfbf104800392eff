// Package noclassinsert is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	lab.Classify dropped on the inbox INSERT error path
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/noclassinsert/process.go
package noclassinsert
