package scenarios_test

import (
	"idemlab/correct"
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
	"idemlab/naive/sourceless"
	"idemlab/naive/swallow"
)

// variants are the rows of the matrix: the correct handler first, then every
// naive one. A new variant is added here (and gets a row on the next
// go test ./scenarios -update).
var variants = []lab.Variant{
	correct.Variant,
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
	sourceless.Variant,
	swallow.Variant,
}
