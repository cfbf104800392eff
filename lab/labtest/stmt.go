package labtest

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
)

// Op is what a statement does, as far as fault addressing and transcripts
// care: its first keyword.
type Op string

// The operations a handler's session issues.
const (
	OpBegin    Op = "BEGIN"
	OpCommit   Op = "COMMIT"
	OpRollback Op = "ROLLBACK"
	OpSelect   Op = "SELECT"
	OpInsert   Op = "INSERT"
	OpUpdate   Op = "UPDATE"
	OpDelete   Op = "DELETE"
	OpOther    Op = "OTHER"
)

// stmt is one step of a session, as the hooking driver sees it before it
// runs.
type stmt struct {
	Session string              // the delivery it belongs to, from withSession
	N       int                 // 1-based number of the step within the session
	Op      Op                  // what it does
	Table   string              // the table it writes or reads, lower case; "" for BEGIN and the like
	Query   string              // the SQL text as the handler wrote it
	Args    []driver.NamedValue // its arguments; a fault may rewrite them
	SQL     string              // Query with whitespace collapsed, for transcripts

	pid  uint32 // PostgreSQL: the server process of the connection it runs on
	exec bool   // run as an Exec (not a query, BEGIN or an end of transaction)
	// connExec is the session whose Exec ran last on the statement's
	// connection, before it ("" for none): that session may hold the
	// Result, whose RowsAffected takes the connection's lock (see
	// heldInStatement).
	connExec string
}

// stmtResult is what a step did, as the hooking driver saw it after it ran.
type stmtResult struct {
	Err          error
	RowsAffected int64          // for INSERT, UPDATE, DELETE
	Rows         int            // rows a query returned, -1 for other statements
	First        []driver.Value // the first row a query returned
	InTx         bool           // whether the connection is inside a transaction after it
	NotRun       bool           // a fault injected before it stopped it: Err is that fault
}

// Text renders the statement with its arguments in place of its
// placeholders, as a student would type it into the sqlite3 shell or psql:
// each ? takes the next argument, and $n (the style both SQLite and
// PostgreSQL accept) the n-th.
func (s *stmt) Text() string {
	if len(s.Args) == 0 {
		return s.SQL
	}
	var b strings.Builder
	next := 0
	inQuote := false
	for i := 0; i < len(s.SQL); i++ {
		c := s.SQL[i]
		switch {
		case c == '\'':
			inQuote = !inQuote
		case c == '?' && !inQuote && next < len(s.Args):
			b.WriteString(literal(s.Args[next].Value))
			next++
			continue
		case c == '$' && !inQuote:
			j := i + 1
			for j < len(s.SQL) && s.SQL[j] >= '0' && s.SQL[j] <= '9' {
				j++
			}
			if n, err := strconv.Atoi(s.SQL[i+1 : j]); err == nil && n >= 1 && n <= len(s.Args) {
				b.WriteString(literal(s.Args[n-1].Value))
				i = j - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// String identifies the statement the way fault reports name it, e.g.
// "statement 3 (UPDATE accounts)".
func (s *stmt) String() string {
	what := string(s.Op)
	if s.Table != "" {
		what += " " + s.Table
	}
	return fmt.Sprintf("statement %d (%s)", s.N, what)
}

// literal renders a value as an SQL literal.
func literal(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case []byte:
		return fmt.Sprintf("X'%X'", v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprint(v)
}

type sessionKey struct{}

// withSession returns a context whose database calls are hooked as steps of
// the named session. Calls without a session pass through the driver
// untouched, which is how the lab reads the database without disturbing it.
func withSession(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, sessionKey{}, name)
}

// SessionOf returns the session ctx belongs to, or "": the delivery a
// context came from, for a scenario that logs on its behalf.
func SessionOf(ctx context.Context) string {
	name, _ := ctx.Value(sessionKey{}).(string)
	return name
}

// newStmt describes a statement about to run, or returns nil when ctx belongs
// to no session.
func newStmt(ctx context.Context, op Op, query string, args []driver.NamedValue) *stmt {
	session := SessionOf(ctx)
	if session == "" {
		return nil
	}
	sql := strings.Join(strings.Fields(query), " ")
	return &stmt{
		Session: session,
		Op:      op,
		Table:   tableOf(op, sql),
		Query:   query,
		Args:    append([]driver.NamedValue(nil), args...),
		SQL:     sql,
	}
}

// opOf reads what a statement does from its first keyword.
func opOf(query string) Op {
	fields := strings.Fields(query)
	if len(fields) == 0 {
		return OpOther
	}
	switch op := Op(strings.ToUpper(fields[0])); op {
	case OpBegin, OpCommit, OpRollback, OpSelect, OpInsert, OpUpdate, OpDelete:
		return op
	case "REPLACE":
		return OpInsert
	case "END":
		return OpCommit
	}
	return OpOther
}

// tableOf finds the table a statement is about: the word after INTO for an
// INSERT, after UPDATE for an UPDATE, after the first FROM otherwise.
func tableOf(op Op, sql string) string {
	fields := strings.Fields(strings.ToLower(sql))
	after := map[Op]string{OpInsert: "into", OpUpdate: "update", OpDelete: "from", OpSelect: "from"}[op]
	if after == "" {
		return ""
	}
	for i, f := range fields {
		if f == after && i+1 < len(fields) {
			return strings.Trim(fields[i+1], `"(`)
		}
	}
	return ""
}
