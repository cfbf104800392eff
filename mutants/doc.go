// Package mutants holds the mutation testing of the scenario matrix
// (mutants/REPORT.md): one-token mutants of correct/, each a package that
// is every non-test file of correct/ but doc.go, with one change. They are
// build output, never committed or edited: mutants/gen writes them from the
// table in mutants/gen/mutations.go into mutants/_generated/, which git
// ignores and go's ./... patterns skip. .ci/mutants generates them and runs
// the matrix on them (about 15 s on two cores):
//
//	.ci/mutants
//
// which is
//
//	go generate ./mutants
//	go test -tags mutants ./scenarios -run '^TestMutants$' -v -parallel 2
//
// gen fails, writing nothing, when a mutation's old text no longer occurs
// exactly once in correct/; TestMutationsFit (in mutants/gen, part of
// go test ./...) generates every mutant from correct/ as it is and
// type-checks them with go vet, so a change to correct/ that a mutation no
// longer fits fails there at once.
package mutants

//go:generate go run ./gen
