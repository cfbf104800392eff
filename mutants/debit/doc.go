// Package debit is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`balance + ?` → `balance - ?`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/debit/process.go
package debit
