// Package mutants holds one-token mutants of correct/, for mutation testing
// of the scenario matrix (mutants/REPORT.md). Each mutants/<name> is
// correct/'s process.go, schema.go and variant.go with one change, written
// by mutants/gen from the table in mutants/gen/mutations.go; none is edited
// by hand. After a change to correct/ or to the table, regenerate:
//
//	go generate ./mutants
//
// TestUpToDate (in mutants/gen, part of go test ./...) fails until that is
// done, and gen itself fails when a mutation's old text no longer occurs
// exactly once in correct/. The matrix runs on the mutants with
//
//	go test -tags mutants ./scenarios -run '^TestMutants$' -v -parallel 2
package mutants

//go:generate go run ./gen
