// Package conflictnowrap is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	the payload-conflict error formatted with `%v` instead of `%w`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/conflictnowrap/process.go
package conflictnowrap
