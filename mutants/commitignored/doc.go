// Package commitignored is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	the COMMIT error ignored
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/commitignored/process.go
package commitignored
