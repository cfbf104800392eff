// Package duplookup is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	a failed lookup of the stored payload answered `return lab.Duplicate, nil`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/duplookup/process.go
package duplookup
