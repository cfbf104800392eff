package lab

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgx's error type must have the method Classify asks for: without it every
// PostgreSQL error would read "other error", and a serialization failure
// could pass for anything a handler makes of an unknown error.
var _ pgError = (*pgconn.PgError)(nil)

func TestClassifyPostgres(t *testing.T) {
	for _, c := range []struct {
		code      string
		want      string
		retryable bool
	}{
		{"40001", "busy", true}, // serialization failure: retry, never a duplicate
		{"40P01", "busy", true}, // deadlock detected
		{"55P03", "busy", false},
		{"57014", "busy", false},
		{"23503", "unknown account", false},
		{"23514", "invalid event", false},
		{"23502", "invalid event", false},
		{"22003", "invalid event", false},
		// A key conflict that reaches Classify was not handled by ON
		// CONFLICT: no kind the lab can name, and never a duplicate.
		{"23505", "other error", false},
		{"53100", "other error", false}, // disk full
	} {
		for _, err := range []error{
			&pgconn.PgError{Code: c.code, Message: "from the server"},
			fmt.Errorf("exec: %w", &pgconn.PgError{Code: c.code}),
		} {
			got := Classify(err)
			if kind := ErrorKind(got); kind != c.want {
				t.Errorf("ErrorKind(Classify(%v, SQLSTATE %s)) = %q, want %q", err, c.code, kind, c.want)
			}
			if !errors.Is(got, err) {
				t.Errorf("Classify(%v) = %v, which does not wrap the original error", err, got)
			}
			if r := Retryable(got); r != c.retryable {
				t.Errorf("Retryable(Classify(SQLSTATE %s)) = %v, want %v", c.code, r, c.retryable)
			}
		}
	}
	if Retryable(nil) || Retryable(errors.New("40001")) {
		t.Errorf("Retryable of nil or of a plain error naming 40001 = true, want false")
	}
}
