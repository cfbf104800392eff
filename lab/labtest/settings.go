package labtest

import (
	"database/sql"
	"fmt"
	"strings"
)

// Durability is what one connection of the handler's pool says, when asked,
// of the two settings that decide whether a transaction it commits survives
// the process dying inside COMMIT, or the machine losing power after it.
// Both belong to the connection, not to the file (except WAL, which a
// connection finds in the file's header and keeps), so a DSN or a PRAGMA a
// handler runs can change them, and they can differ from one connection of
// a pool to the next.
type Durability struct {
	// Conn numbers the connection in the order the read took them: the
	// pool's open connections first, then the one it opened for the read.
	Conn int
	// Fresh is set for the connection the read opened: what every
	// connection the pool opens later will have, from the DSN alone.
	Fresh bool
	// JournalMode is PRAGMA journal_mode's answer, lower case: delete,
	// truncate, persist, memory, wal or off.
	JournalMode string
	// Synchronous is PRAGMA synchronous's answer: 0 OFF, 1 NORMAL, 2 FULL,
	// 3 EXTRA.
	Synchronous int
}

// String renders d as the transcript shows it, e.g.
// "connection 1: journal_mode=delete synchronous=FULL".
func (d Durability) String() string {
	fresh := ""
	if d.Fresh {
		fresh = " (opened now)"
	}
	return fmt.Sprintf("connection %d%s: journal_mode=%s synchronous=%s", d.Conn, fresh, d.JournalMode, SynchronousName(d.Synchronous))
}

// SynchronousName names a value of PRAGMA synchronous as SQLite's docs do.
func SynchronousName(n int) string {
	if names := []string{"OFF", "NORMAL", "FULL", "EXTRA"}; n >= 0 && n < len(names) {
		return names[n]
	}
	return fmt.Sprint(n)
}

// Durability asks every connection of the handler's pool for its journal
// mode and its synchronous setting, and one connection more that the read
// opens (unless the handler capped its pool and every connection is open
// already), which stands for any connection the pool opens later. The
// connections are held all at once, so the pool cannot hand one out twice.
// The reads are the lab's, not a delivery's: call it between deliveries.
// On PostgreSQL it stops the test: durability there is the server's.
func (db *DB) Durability() []Durability {
	tb := db.run.tb
	tb.Helper()
	if db.pg != nil {
		tb.Fatalf("Durability: journal_mode and synchronous are SQLite's (PostgreSQL's durability is the server's)")
	}
	stats := db.sql.Stats()
	n := stats.OpenConnections + 1
	if limit := stats.MaxOpenConnections; limit > 0 && n > limit {
		n = limit
	}
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var out []Durability
	for i := range n {
		c, err := db.sql.Conn(db.labCtx)
		if err != nil {
			tb.Fatalf("Durability: taking connection %d of the handler's pool: %v", i+1, err)
		}
		conns = append(conns, c)
		d := Durability{Conn: i + 1, Fresh: i >= stats.OpenConnections}
		if err := c.QueryRowContext(db.labCtx, `PRAGMA journal_mode`).Scan(&d.JournalMode); err != nil {
			tb.Fatalf("Durability: PRAGMA journal_mode: %v", err)
		}
		if err := c.QueryRowContext(db.labCtx, `PRAGMA synchronous`).Scan(&d.Synchronous); err != nil {
			tb.Fatalf("Durability: PRAGMA synchronous: %v", err)
		}
		d.JournalMode = strings.ToLower(d.JournalMode)
		out = append(out, d)
	}
	return out
}
