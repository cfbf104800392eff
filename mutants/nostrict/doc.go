// Package nostrict is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	STRICT dropped from the inbox table
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/nostrict/schema.go
package nostrict
