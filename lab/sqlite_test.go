package lab

import "testing"

func TestSQLiteFile(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/tmp/ledger.db", "file:/tmp/ledger.db"},
		{"ledger.db", "file:ledger.db"},
		{"/tmp/a?b#c%d.db", "file:/tmp/a%3Fb%23c%25d.db"},
		{"/tmp/with space.db", "file:/tmp/with%20space.db"},
		// "file://tmp/x.db" would name the host tmp: an empty authority
		// keeps the path's own "//".
		{"//tmp/x.db", "file:////tmp/x.db"},
		{"//localhost/x.db", "file:////localhost/x.db"},
	} {
		if got := SQLiteFile(c.path); got != c.want {
			t.Errorf("SQLiteFile(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}
