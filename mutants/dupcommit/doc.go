// Package dupcommit is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	a failed COMMIT answered `return lab.Duplicate, nil`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/dupcommit/process.go
package dupcommit
