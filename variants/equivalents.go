package variants

import (
	"database/sql"

	"idemlab/equivalent/commitmismatch"
	"idemlab/equivalent/mutex"
	"idemlab/equivalent/plainbegin"
	"idemlab/equivalent/poolping"
	"idemlab/equivalent/readfirst"
	"idemlab/equivalent/untargeted"
	"idemlab/equivalent/wal"
	"idemlab/lab"
)

// Equivalents are the handlers of equivalent/: each does what correct/
// does, written another way (its doc says why that changes nothing), so
// every scenario must hold on each as it holds on correct/, and a verdict
// against one is the engine's, not the handler's. TestEquivalents runs the
// matrix on them, and exercise 11's check asks whether a student's
// scenario holds on each; TestEquivalentsAreThePackages holds the list to
// the directory. Not here: naive/poolread, which waits for itself on a
// pool of one connection.
var Equivalents = []lab.Variant{
	plainbegin.Variant,
	readfirst.Variant,
	untargeted.Variant,
	commitmismatch.Variant,
	poolping.Variant,
	wal.Variant,
	mutex.Variant,
}

// PoolOfOne is v with its handler given a pool of one connection, as
// correct's doc tells a user to open it, named so ("correct (pool of one
// connection)").
func PoolOfOne(v lab.Variant) lab.Variant {
	newHandler := v.New
	v.Name += " (pool of one connection)"
	v.New = func(db *sql.DB) lab.Processor {
		db.SetMaxOpenConns(1)
		return newHandler(db)
	}
	return v
}
