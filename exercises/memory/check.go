package memory

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
)

// Check is the exercise's check: the schema is created on one connection of
// the pool while a delivery runs on another, and the credit must survive
// closing and reopening the pool, as it survives a restart of the service.
func Check(t *testing.T, dsn func(path string) string) []string {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	open := func() *sql.DB {
		c, err := sqlite.NewConnector(dsn(path))
		if err != nil {
			t.Fatal(err)
		}
		return sql.OpenDB(c)
	}
	var failures []string
	fail := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }

	db := open()
	setup, err := db.Conn(ctx) // held, so the handler must use another connection
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.ExecContext(ctx, correct.Schema+`; INSERT INTO accounts (id) VALUES (1)`); err != nil {
		t.Fatalf("schema: %v", err)
	}
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	if got, err := correct.New(db).Process(ctx, e); err != nil || got != lab.Applied {
		fail("Process(%v) on a second connection of the pool = %v, %v, want applied", e, got, err)
	}
	setup.Close()
	db.Close()

	db = open()
	defer db.Close()
	var balance int64
	if err := db.QueryRow(`SELECT balance FROM accounts WHERE id = 1`).Scan(&balance); err != nil || balance != 500 {
		fail("after reopening, the balance of account 1 = %d (%v), want 500", balance, err)
	}
	return failures
}
