// Package wrongid is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`WHERE id = ?` bound to the amount instead of the account id
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/wrongid/process.go
package wrongid
