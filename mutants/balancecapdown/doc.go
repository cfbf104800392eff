// Package balancecapdown is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	balance cap off by one downwards
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/balancecapdown/schema.go
package balancecapdown
