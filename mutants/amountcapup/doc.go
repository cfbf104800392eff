// Package amountcapup is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	amount CHECK cap off by one upwards (1000000001)
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/amountcapup/schema.go
package amountcapup
