package checks

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
)

// memoryVariant is the correct handler on dsn: the DSN is the whole
// memory exercise.
func memoryVariant(dsn func(path string) string) lab.Variant {
	return lab.Variant{Name: "exercises/memory", Mistake: "an exercise", Schema: correct.Schema, DSN: dsn,
		New: func(db *sql.DB) lab.Processor { return correct.New(db) }}
}

// Memory is the check of the memory exercise: SecondConnection, then the
// whole matrix held to the correct standard with the correct handler on
// dsn.
func Memory(c *Checker, dsn func(path string) string) {
	if lines := secondConnection(c, dsn); len(lines) > 0 {
		c.Fail(Failure{Guarantee: "SecondConnection", Lines: lines,
			Shows: "the schema made on one connection of the pool, a delivery on another, then the pool closed and reopened: the credit is there"})
		return // the matrix needs one database that every connection shares
	}
	c.Matrix(memoryVariant(dsn), nil)
}

// secondConnection: the schema is created on one connection of the pool
// while a delivery runs on another, and the credit must survive closing
// and reopening the pool, as it survives a restart of the service.
func secondConnection(c *Checker, dsn func(path string) string) []string {
	t := c.T
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
