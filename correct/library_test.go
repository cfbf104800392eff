package correct_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
)

// open creates a database at a fresh path with correct's schema and one
// account, and opens a pool on dsn(path).
func open(t *testing.T, dsn func(string) string) *sql.DB {
	t.Helper()
	c, err := sqlite.NewConnector(dsn(filepath.Join(t.TempDir(), "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(correct.Schema + `INSERT INTO accounts (id) VALUES (1);`); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestWithoutForeignKeys opens the handler on a DSN that lacks
// foreign_keys(1), as a user who builds a DSN of their own might: an event
// for a missing account must still not be answered "applied", and must
// leave nothing behind.
func TestWithoutForeignKeys(t *testing.T) {
	db := open(t, func(path string) string {
		return strings.Replace(correct.DSN(path), "_pragma=foreign_keys(1)&", "", 1)
	})
	h := correct.New(db)
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 99, Amount: 500}
	o, err := h.Process(context.Background(), e)
	if !errors.Is(err, lab.ErrUnknownAccount) {
		t.Errorf("Process(%v) on a DSN without foreign keys = %v, %v, want an error (unknown account)", e, o, err)
	}
	var rows int
	if err := db.QueryRow(`SELECT count(*) FROM inbox`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("inbox rows after Process(%v) = %d, want 0", e, rows)
	}
}
