// Package norollback is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`defer tx.Rollback()` dropped
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/norollback/process.go
package norollback
