// Package andconflict is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`||` → `&&` in the payload comparison: a conflict only when both fields differ
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/andconflict/process.go
package andconflict
