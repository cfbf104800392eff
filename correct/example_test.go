package correct_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
)

// The same event delivered twice: applied once, then recognised as a
// duplicate, and the balance moves once.
func Example() {
	dir, err := os.MkdirTemp("", "idemlab-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	connector, err := sqlite.NewConnector(correct.DSN(filepath.Join(dir, "ledger.db")))
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(1) // SQLite has one writer: see the package doc
	if _, err := db.Exec(correct.Schema + `INSERT INTO accounts (id) VALUES (1);`); err != nil {
		log.Fatal(err)
	}

	h := correct.New(db)
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	for range 2 {
		outcome, err := h.Process(context.Background(), e)
		fmt.Println(outcome, err)
	}
	var balance int64
	if err := db.QueryRow(`SELECT balance FROM accounts WHERE id = 1`).Scan(&balance); err != nil {
		log.Fatal(err)
	}
	fmt.Println("balance", balance)
	// Output:
	// applied <nil>
	// duplicate <nil>
	// balance 500
}
