// Package sourcenull is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	NOT NULL dropped from inbox.source
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/sourcenull/schema.go
package sourcenull
