// Package variants is the registry of the implementations the kit compares:
// the correct handler first, then equivalent/plainbegin (correct written
// with a plain BEGIN), then every naive one, each the correct one with a
// single mistake. The scenario tests run every scenario against this list,
// and the command lists the same rows, so a variant exists for the kit once
// it is added here.
//
// Adding a variant: make naive/<name>/ with a doc.go, a variant.go copied
// from correct/, and a copy of each file of correct/ whose code the mistake
// changes (process.go, schema.go), then make the one mistake. What the
// mistake leaves alone is taken from correct/ (correct.Schema, correct.DSN,
// correct.PostgresSchema) and from package postgres, never copied: a copy
// identical to correct's teaches nothing and goes stale (TestNoCopies).
// Say the mistake in the package doc as a BUG(lab) note that names the
// scenarios that catch it, set Name and Mistake in its variant.go, add it to
// All, and run go test ./scenarios -update. TestRegistry checks the rest.
package variants

import (
	"idemlab/correct"
	"idemlab/equivalent/plainbegin"
	"idemlab/lab"
	"idemlab/naive/busyasduplicate"
	"idemlab/naive/checkthenact"
	"idemlab/naive/contenthash"
	"idemlab/naive/deferred"
	"idemlab/naive/effectfirst"
	"idemlab/naive/idonly"
	"idemlab/naive/insertorignore"
	"idemlab/naive/insertorreplace"
	"idemlab/naive/markfirst"
	"idemlab/naive/nofk"
	"idemlab/naive/nokey"
	"idemlab/naive/poolread"
	"idemlab/naive/sourceless"
	"idemlab/naive/swallow"
)

// All are the rows of the matrix, in order: the correct handler first, then
// equivalent/plainbegin, which is correct with a plain BEGIN (the article's
// point that BEGIN IMMEDIATE is one way, not the only way, to take the write
// lock first), then every naive one by name.
var All = []lab.Variant{
	correct.Variant,
	plainbegin.Variant,
	busyasduplicate.Variant,
	checkthenact.Variant,
	contenthash.Variant,
	deferred.Variant,
	effectfirst.Variant,
	idonly.Variant,
	insertorignore.Variant,
	insertorreplace.Variant,
	markfirst.Variant,
	nofk.Variant,
	nokey.Variant,
	poolread.Variant,
	sourceless.Variant,
	swallow.Variant,
}
