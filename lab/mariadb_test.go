package lab

import (
	"errors"
	"fmt"
	"testing"
)

// fakeMariaDB is an error with a MariaDB error number, as package mariadb's
// Error is (this package's tests cannot import it: it imports lab).
type fakeMariaDB uint16

func (f fakeMariaDB) Error() string       { return fmt.Sprintf("Error %d: from the server", uint16(f)) }
func (f fakeMariaDB) MySQLNumber() uint16 { return uint16(f) }

func TestClassifyMariaDB(t *testing.T) {
	for _, c := range []struct {
		number    uint16
		want      string
		retryable bool
	}{
		{1213, "busy", true},  // deadlock: the transaction was rolled back
		{1020, "busy", true},  // record changed since last read: rolled back too
		{1205, "busy", false}, // lock wait timeout: only the statement; roll back first
		{1317, "busy", false}, // KILL QUERY: only the statement
		{1969, "busy", false}, // max_statement_time: only the statement
		{1452, "unknown account", false},
		{1048, "invalid event", false},
		{4025, "invalid event", false},
		{1406, "invalid event", false},
		{1264, "invalid event", false},
		{1265, "invalid event", false},
		{1366, "invalid event", false},
		// A key conflict that reaches Classify was not handled by ON
		// DUPLICATE KEY UPDATE: no kind the lab can name, never a duplicate.
		{1062, "other error", false},
		{1021, "other error", false}, // disk full
	} {
		for _, err := range []error{fakeMariaDB(c.number), fmt.Errorf("exec: %w", fakeMariaDB(c.number))} {
			got := Classify(err)
			if kind := ErrorKind(got); kind != c.want {
				t.Errorf("ErrorKind(Classify(%v)) = %q, want %q", err, kind, c.want)
			}
			if !errors.Is(got, err) {
				t.Errorf("Classify(%v) = %v, which does not wrap the original error", err, got)
			}
			if r := Retryable(got); r != c.retryable {
				t.Errorf("Retryable(Classify(%v)) = %v, want %v", err, r, c.retryable)
			}
		}
	}
}
