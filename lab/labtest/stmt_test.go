package labtest

import (
	"context"
	"database/sql/driver"
	"testing"
)

func TestStmtDescription(t *testing.T) {
	ctx := withSession(context.Background(), "A")
	for _, c := range []struct {
		query string
		args  []any
		op    Op
		table string
		text  string
	}{
		{"\n\t\tINSERT INTO inbox (source, amount)\n\t\tVALUES (?, ?)", []any{"it's", int64(5)},
			OpInsert, "inbox", "INSERT INTO inbox (source, amount) VALUES ('it''s', 5)"},
		{"INSERT OR IGNORE INTO inbox (a) VALUES (?)", []any{nil}, OpInsert, "inbox", "INSERT OR IGNORE INTO inbox (a) VALUES (NULL)"},
		{"UPDATE accounts SET balance = balance + ? WHERE id = ?", []any{int64(500), int64(1)},
			OpUpdate, "accounts", "UPDATE accounts SET balance = balance + 500 WHERE id = 1"},
		{"select count(*) from inbox where x = '?' and y = ?", []any{"v"}, OpSelect, "inbox",
			"select count(*) from inbox where x = '?' and y = 'v'"},
		{"PRAGMA integrity_check", nil, OpOther, "", "PRAGMA integrity_check"},
		// $n placeholders, which SQLite and PostgreSQL both accept, take the
		// n-th argument wherever they stand; a $ in a string or past the
		// arguments stays as written.
		{"UPDATE accounts SET balance = balance + $2 WHERE id = $1", []any{int64(1), int64(500)},
			OpUpdate, "accounts", "UPDATE accounts SET balance = balance + 500 WHERE id = 1"},
		{"SELECT $1, '$1', $10, $1x FROM inbox", []any{"a"}, OpSelect, "inbox", "SELECT 'a', '$1', $10, 'a'x FROM inbox"},
		{"SELECT 'ü' || $1 FROM inbox", []any{"é"}, OpSelect, "inbox", "SELECT 'ü' || 'é' FROM inbox"},
	} {
		var args []driver.NamedValue
		for i, a := range c.args {
			args = append(args, driver.NamedValue{Ordinal: i + 1, Value: a})
		}
		s := newStmt(ctx, opOf(c.query), c.query, args)
		if s.Op != c.op || s.Table != c.table || s.Text() != c.text {
			t.Errorf("newStmt(%q) = %s %q %q, want %s %q %q", c.query, s.Op, s.Table, s.Text(), c.op, c.table, c.text)
		}
	}
	if s := newStmt(context.Background(), OpSelect, "SELECT 1", nil); s != nil {
		t.Errorf("newStmt without a session = %v, want nil (not hooked)", s)
	}
}

func TestFaultMatches(t *testing.T) {
	update := &stmt{Session: "A", N: 3, Op: OpUpdate, Table: "accounts"}
	insert := &stmt{Session: "A", N: 2, Op: OpInsert, Table: "inbox"}
	for _, c := range []struct {
		f    Fault
		w    When
		s    *stmt
		want bool
	}{
		{Fault{When: Before, Op: OpUpdate, Table: "accounts"}, Before, update, true},
		{Fault{When: Before, Op: OpUpdate, Table: "accounts"}, After, update, false},
		{Fault{When: After, Op: OpUpdate, Table: "accounts"}, After, update, true},
		{Fault{When: Before, Op: OpUpdate, Table: "accounts"}, Before, insert, false},
		{Fault{When: Before, N: 2}, Before, insert, true},
		{Fault{When: Before, N: 2, Session: "B"}, Before, insert, false},
		{Fault{When: Before}, Before, insert, true},
		{Fault{When: Before, spent: true}, Before, insert, false},
	} {
		if got := c.f.matches(c.w, c.s); got != c.want {
			t.Errorf("(%v).matches(%v, %v) = %v, want %v", &c.f, c.w, c.s, got, c.want)
		}
	}
}
