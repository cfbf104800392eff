// Package noreferences is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	REFERENCES accounts (id) dropped
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/noreferences/schema.go
package noreferences
