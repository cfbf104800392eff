package checks

import (
	"slices"

	"idemlab/lab"
)

// Every exercise's package has a connection string of its own, and a
// student may change it while fixing something else: WAL mode "for speed"
// with its automatic checkpoints off, a synchronous setting that lets a
// power loss take back an answered credit. Exercise 10 is about the
// connection string, and its check searches file names too; every other
// check that runs the matrix holds the handler's DSN to the settings that
// keep the file durable and bounded, on one plain file name, under the
// same names, so that a guarantee means one thing whichever exercise
// reports it. Foreign keys, the busy timeout and BEGIN IMMEDIATE are left
// out: outside exercise 10 a handler may set them itself, on its own
// connection or in its own BEGIN (accepted_test.go holds such fixes), and
// the matrix judges what they do.

// settingsGuarantees are the guarantees of dsnGuarantees that every
// exercise's DSN is held to.
var settingsGuarantees = []string{"Durable", "Checkpoint"}

// dsnSettings holds v's DSN to settingsGuarantees on a plain file name,
// and fails c with the first finding of each that c has not failed yet
// (exercise 10's own search may have).
func dsnSettings(c *Checker, v lab.Variant) {
	if v.DSN == nil || c.Done() || !slices.ContainsFunc(settingsGuarantees, func(g string) bool { return !c.Skips(g) && !c.failed(g) }) {
		return
	}
	found := map[string]string{}
	for _, f := range tryDSN(c.T.TempDir(), v.DSN, dsnCase{name: "ledger.db"}) {
		if _, ok := found[f.guarantee]; !ok {
			found[f.guarantee] = f.line
		}
	}
	for _, g := range dsnGuarantees {
		if line, ok := found[g.name]; ok && slices.Contains(settingsGuarantees, g.name) && !c.Skips(g.name) && !c.failed(g.name) {
			c.Fail(Failure{Guarantee: g.name, Shows: g.shows, Lines: []string{line}})
		}
	}
}

// failed reports whether c has recorded a failure of guarantee.
func (c *Checker) failed(guarantee string) bool {
	return slices.ContainsFunc(c.failures, func(f Failure) bool { return f.Guarantee == guarantee })
}
