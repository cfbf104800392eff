// Package dupinvalid is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	an invalid event answered `return lab.Duplicate, nil`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/dupinvalid/process.go
package dupinvalid
