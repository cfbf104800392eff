// Package keylen127 is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	event_id length CHECK cap 128 → 127
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/keylen127/schema.go
package keylen127
