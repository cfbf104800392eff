package labtest_test

import (
	"strings"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// TestSetupFailureIsAVerdict holds Open to what a variant whose DSN or
// schema cannot set up a database gets: a verdict on the cell that names
// what failed, never a panic of the test or a cell without one. A DSN with
// nolock=1 keeps the file out of write-ahead-log mode (the cell says so,
// and goes on in the mode the DSN left); a schema SQLite refuses stops the
// cell with SQLite's reason.
func TestSetupFailureIsAVerdict(t *testing.T) {
	deliver := labtest.Scenario{Name: "OneCredit", Run: func(r *labtest.Run) {
		db := r.OpenWAL()
		r.WantOutcome(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}), lab.Applied)
	}}
	nolock := correct.Variant
	nolock.Name, nolock.Mistake, nolock.Postgres = "setup/nolock", "nolock=1 in the DSN", nil
	nolock.DSN = func(path string) string { return correct.DSN(path) + "&nolock=1" }
	badSchema := correct.Variant
	badSchema.Name, badSchema.Mistake, badSchema.Postgres = "setup/badschema", "a schema SQLite refuses", nil
	badSchema.Schema = correct.Schema + "; CREATE TABEL oops (x);"
	for _, c := range []struct {
		v    lab.Variant
		want string
	}{
		{nolock, "OpenWAL: PRAGMA journal_mode = WAL on a connection of the variant's DSN = delete, want wal"},
		{badSchema, "setting up a database with setup/badschema's DSN and schema: schema: "},
	} {
		t.Run(c.v.Name, func(t *testing.T) {
			cell := labtest.RunCell(t, deliver, c.v)
			switch {
			case cell == nil:
				t.Fatalf("RunCell(OneCredit, %s) = nil, want a verdict", c.v.Name)
			case cell.Pass:
				t.Errorf("RunCell(OneCredit, %s) holds, want it to fail with %q", c.v.Name, c.want)
			case !strings.Contains(strings.Join(cell.Failures, "\n"), c.want):
				t.Errorf("RunCell(OneCredit, %s) = %q, want a failure naming %q", c.v.Name, cell.Failures, c.want)
			}
		})
	}
}
