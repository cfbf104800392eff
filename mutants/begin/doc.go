// Package begin is a mutant of correct/ for mutation testing of the
// scenario matrix: correct/ with one change in process.go:
//
//	`h.db.BeginTx(ctx, nil)` → `h.db.Begin()`: the caller's context not passed to BEGIN
//
// See mutants/REPORT.md for which scenarios kill it.
//
//	diff -u correct/process.go mutants/begin/process.go
package begin
