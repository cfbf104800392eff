package scenarios_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"idemlab/correct"
	"idemlab/equivalent/wal"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/scenarios"
)

// TestCrashReadsDurability holds the Crash column to the settings it
// reads: correct/ given each setting that gives a committed transaction
// away, in its DSN or on one connection of its pool only, must fail it
// with the setting named in the cell; correct/ and equivalent/wal must
// hold it. synchronous=NORMAL is refused in both journal modes, and so is a
// DSN that pins journal_mode(DELETE) beside it, which keeps the WAL case's
// file in DELETE mode.
func TestCrashReadsDurability(t *testing.T) {
	withDSN := func(name, pragmas string) lab.Variant {
		v := correct.Variant
		v.Name, v.Mistake = "durability/"+name, pragmas
		v.DSN = func(path string) string { return correct.DSN(path) + pragmas }
		return v
	}
	// One connection of the pool told at start-up, as a handler that runs
	// a PRAGMA on its pool once would: the others keep the DSN's FULL.
	oneConnOff := correct.Variant
	oneConnOff.Name, oneConnOff.Mistake = "durability/oneconnoff", "PRAGMA synchronous = OFF run once on the pool"
	oneConnOff.New = func(db *sql.DB) lab.Processor {
		if _, err := db.ExecContext(context.Background(), `PRAGMA synchronous = OFF`); err != nil {
			t.Errorf("PRAGMA synchronous = OFF: %v", err)
		}
		return correct.New(db)
	}
	crash := scenarios.Named(scenarios.All, "Crash")
	for _, c := range []struct {
		v    lab.Variant
		want string // a word of the refusal; "" when the cell must hold
	}{
		{correct.Variant, ""},
		{wal.Variant, ""},
		{withDSN("normal", "&_pragma=synchronous(NORMAL)"), "rollback journal, durability settings: connection 1: journal_mode=delete synchronous=NORMAL"},
		{withDSN("deletenormal", "&_pragma=journal_mode(DELETE)&_pragma=synchronous(NORMAL)"), "journal_mode=delete synchronous=NORMAL"},
		{withDSN("memory", "&_pragma=journal_mode(MEMORY)"), "journal_mode=MEMORY"},
		{withDSN("off", "&_pragma=journal_mode(OFF)"), "journal_mode=OFF"},
		{withDSN("syncoff", "&_pragma=synchronous(OFF)"), "synchronous=OFF"},
		{withDSN("walnormal", "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"), "synchronous=NORMAL in WAL mode"},
		{oneConnOff, "synchronous=OFF"},
	} {
		t.Run(c.v.Name, func(t *testing.T) {
			cell := labtest.RunCell(t, crash, c.v)
			switch {
			case c.want == "" && !cell.Pass:
				t.Errorf("Crash(%s) = %s, want it to hold", c.v.Name, cell.Detail)
			case c.want != "" && cell.Pass:
				t.Errorf("Crash(%s) holds (%s), want it refused for %s", c.v.Name, cell.Detail, c.want)
			case c.want != "" && !strings.Contains(cell.Detail, c.want):
				t.Errorf("Crash(%s) = %s, want the refusal to name %s", c.v.Name, cell.Detail, c.want)
			}
		})
	}
}
