// Package lookupswap is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	lookup arguments swapped: source and event_id
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/lookupswap/process.go
package lookupswap
