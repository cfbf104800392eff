// Package defercommit is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`defer tx.Rollback()` → `defer tx.Commit()`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/defercommit/process.go
package defercommit
