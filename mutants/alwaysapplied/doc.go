// Package alwaysapplied is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`outcome = lab.Duplicate` → `outcome = lab.Applied`: a repeat answered applied
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/alwaysapplied/process.go
package alwaysapplied
