package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"idemlab/lab"
)

// TestDSN holds DSN to what pgx reads back from it: every level and both
// timeouts as run-time parameters, the server's own query kept, and the
// space in "repeatable read" a space (pgx reads a '+' in a query as a '+').
func TestDSN(t *testing.T) {
	for _, level := range lab.Isolations {
		dsn := DSN("postgres:///postgres?host=/var/run/postgresql&application_name=lab", level)
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatalf("pgx.ParseConfig(DSN(…, %q)) error = %v", level, err)
		}
		want := map[string]string{
			"default_transaction_isolation": string(level),
			"lock_timeout":                  "2s",
			"statement_timeout":             "5s",
			"application_name":              "lab",
		}
		for k, v := range want {
			if got := cfg.RuntimeParams[k]; got != v {
				t.Errorf("DSN(…, %q) sets %s = %q, want %q", level, k, got, v)
			}
		}
		if cfg.Host != "/var/run/postgresql" {
			t.Errorf("DSN(…, %q) connects to host %q, want /var/run/postgresql", level, cfg.Host)
		}
	}
}
