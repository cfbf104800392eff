// Package noclasslookup is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	lab.Classify dropped on the lookup error path
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/noclasslookup/process.go
package noclasslookup
