// Package idge is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`WHERE id = ?` → `WHERE id >= ?`: the credit lands on this account and every later one
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/idge/process.go
package idge
