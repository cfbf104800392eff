// Package lookupnosource is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	the stored payload looked up by event_id alone, without the source
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/lookupnosource/process.go
package lookupnosource
