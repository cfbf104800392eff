// Package dupinsert is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	a failed inbox INSERT answered `return lab.Duplicate, nil`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/dupinsert/process.go
package dupinsert
