// Package amountcapdown is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	amount CHECK cap off by one downwards (999999999)
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/amountcapdown/schema.go
package amountcapdown
