// Package uniquekey is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in schema.go:
//
//	`PRIMARY KEY (source, event_id)` → `UNIQUE (source, event_id)`
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/schema.go mutants/uniquekey/schema.go
package uniquekey
