package correct_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/mariadb"
)

// TestMariaDBSchemaKeyBytes holds MariaDBSchema's key columns to Validate's
// limit, which counts bytes (lab.MaxKeyBytes), as Schema's and
// PostgresSchema's CHECKs do with octet_length: on a real server
// (IDEMLAB_MARIADB), a source or event_id is refused exactly when Validate
// refuses it, whatever the width of its characters.
//
// VARCHAR(128) alone does not do it: "M represents the maximum column
// length in characters" (https://mariadb.com/kb/en/varchar/), so under
// utf8mb4 it takes 128 characters of up to 4 bytes. A CHECK on
// CHAR_LENGTH counts characters too; OCTET_LENGTH "returns the length of
// the given string, in octets (bytes)" and counts "a multi-byte character
// ... as multiple bytes" (https://mariadb.com/kb/en/octet_length/), and
// unlike LENGTH it does not turn into CHAR_LENGTH under
// sql_mode=ORACLE. With CHAR_LENGTH, 64 two-byte characters and one byte,
// 129 bytes, were stored here; with OCTET_LENGTH the CHECK refuses them
// (4025), and a key too long for the column is refused by the column
// itself (1406).
func TestMariaDBSchemaKeyBytes(t *testing.T) {
	server := os.Getenv("IDEMLAB_MARIADB")
	if server == "" {
		t.Skip(`IDEMLAB_MARIADB is not set: eval "$(.ci/mariadb-start)" to run it`)
	}
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		t.Fatalf("IDEMLAB_MARIADB: %v", err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() }) // after the DROP below: cleanups run last first
	name := fmt.Sprintf("idemlab_schema_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name); err != nil {
			t.Errorf("DROP DATABASE %s: %v", name, err)
		}
	})
	cfg.DBName = name
	db, err := sql.Open("mysql", mariadb.DSN(cfg.FormatDSN(), lab.ReadCommitted))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, st := range correct.MariaDBSchema {
		if _, err := db.Exec(st); err != nil {
			t.Fatalf("correct.MariaDBSchema: %v", err)
		}
	}
	if _, err := db.Exec(`INSERT INTO accounts (id) VALUES (1)`); err != nil {
		t.Fatal(err)
	}

	keys := []struct {
		what string
		key  string
	}{
		{"128 one-byte characters", strings.Repeat("x", 128)},
		{"129 one-byte characters", strings.Repeat("x", 129)},
		{"64 two-byte characters, 128 bytes", strings.Repeat("é", 64)},
		{"64 two-byte characters and one byte, 129 bytes", strings.Repeat("é", 64) + "x"},
		{"65 two-byte characters, 130 bytes", strings.Repeat("é", 65)},
		{"42 three-byte characters and two bytes, 128 bytes", strings.Repeat("€", 42) + "xx"},
		{"43 three-byte characters, 129 bytes", strings.Repeat("€", 43)},
		{"32 four-byte characters, 128 bytes", strings.Repeat("😀", 32)},
		{"32 four-byte characters and one byte, 129 bytes", strings.Repeat("😀", 32) + "x"},
	}
	n := 0
	for _, k := range keys {
		for _, column := range []string{"source", "event_id"} {
			n++
			e := lab.Event{Source: "provider-a", EventID: fmt.Sprintf("evt-%d", n), AccountID: 1, Amount: 500}
			if column == "source" {
				e.Source = k.key
			} else {
				e.EventID = k.key
			}
			_, err := db.Exec(`INSERT INTO inbox (source, event_id, account_id, amount) VALUES (?, ?, ?, ?)`,
				e.Source, e.EventID, e.AccountID, e.Amount)
			valid := e.Validate() == nil
			var me *mysql.MySQLError
			switch {
			case valid && err != nil:
				t.Errorf("%s, %s: Validate accepts it, the schema refuses it: %v", column, k.what, err)
			case !valid && err == nil:
				t.Errorf("%s, %s: Validate refuses it, the schema stores it", column, k.what)
			case !valid && !(errors.As(err, &me) && (me.Number == 4025 || me.Number == 1406)):
				t.Errorf("%s, %s: refused with %v, want the CHECK's 4025 or the column's 1406", column, k.what, err)
			case !valid && lab.ErrorKind(mariadb.Classify(t.Context(), err)) != "invalid event":
				t.Errorf("%s, %s: refused with %v, which Classify does not call an invalid event", column, k.what, err)
			}
		}
	}
}
