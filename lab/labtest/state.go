package labtest

import (
	"cmp"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"idemlab/lab"
)

// Reading what the database holds: balances, inbox rows, and the
// snapshot the invariants and the single-delivery checks compare.

// Balance returns the balance of account id, or -1 if there is no such
// account.
func (db *DB) Balance(id int64) int64 {
	s := db.snapshot()
	if b, ok := s.balances[id]; ok {
		return b
	}
	return -1
}

// Steps returns how many statements session has run on this database.
func (db *DB) Steps(session string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.steps[session]
}

// Pool returns the database's connection pool, for code beside the handler
// that shares its database (an outbox relay, say). Its calls carry no
// session, so they are neither recorded nor faulted.
func (db *DB) Pool() *sql.DB { return db.sql }

// State returns every account's balance and the rows of the inbox, as the
// events they store. Call it when no delivery is running: the two tables
// are read one after the other.
func (db *DB) State() (balances map[int64]int64, inbox []lab.Event) {
	s := db.snapshot()
	return s.balances, slices.Clone(s.inbox)
}

// InboxRows returns the number of rows in the inbox.
func (db *DB) InboxRows() int { return len(db.snapshot().inbox) }

// snapshot is the whole content of the two tables, small enough to compare.
type snapshot struct {
	balances map[int64]int64
	inbox    []lab.Event // sorted, as the rows of the inbox store them
}

func (db *DB) snapshot() snapshot {
	// One query, so one read transaction: a snapshot is taken around every
	// delivery, and each read transaction costs SQLite its locks and its
	// look for a hot journal. The casts and coalesces read whatever a
	// broken schema let in (a NULL key, a REAL amount) as a row the
	// invariants can report, instead of a scan error that would stop the lab.
	// It is prepared once per pool: parsing it again for every snapshot
	// cost as much as running it.
	//
	// On a server it runs on the lab's control connection, at READ
	// COMMITTED, with the namespace named: on the variant's pool it would
	// run at the variant's isolation level, and at SERIALIZABLE take locks
	// of its own (on PostgreSQL, predicate locks from the table in shared
	// memory that the deliveries' answers depend on: see
	// postgresEngine.interference).
	if db.snap == nil {
		pool, schema, integer := db.own, "", "BIGINT"
		if db.pg != nil {
			pool, schema, integer = db.pg.srv.control, db.pg.schema+".", db.pg.srv.engine.integer()
		}
		st, err := pool.PrepareContext(db.labCtx, snapshotQuery(schema, integer))
		if err != nil {
			db.run.tb.Fatalf("reading accounts and inbox: %v", err)
		}
		db.snap = st
	}
	rows, err := db.snap.QueryContext(db.labCtx)
	if err != nil {
		db.run.tb.Fatalf("reading accounts and inbox: %v", err)
	}
	s, err := scanSnapshot(rows)
	if err != nil {
		db.run.tb.Fatalf("reading accounts and inbox: %v", err)
	}
	return s
}

// snapshotQuery reads both tables in one query (see snapshot), their
// names qualified by schema, casting to the 64-bit integer type named
// integer (BIGINT; MariaDB has no CAST AS BIGINT).
func snapshotQuery(schema, integer string) string {
	return `SELECT 0, id, CAST(balance AS ` + integer + `), '', '', 0 FROM ` + schema + `accounts
			UNION ALL
			SELECT 1, 0, CAST(amount AS ` + integer + `), coalesce(source, '(NULL)'), coalesce(event_id, '(NULL)'),
				coalesce(account_id, 0) FROM ` + schema + `inbox`
}

// scanSnapshot reads snapshotQuery's rows and closes them.
func scanSnapshot(rows *sql.Rows) (snapshot, error) {
	defer rows.Close()
	s := snapshot{balances: map[int64]int64{}}
	for rows.Next() {
		var table, id, amount int64
		var r lab.Event
		if err := rows.Scan(&table, &id, &amount, &r.Source, &r.EventID, &r.AccountID); err != nil {
			return s, err
		}
		if table == 0 {
			s.balances[id] = amount
			continue
		}
		r.Amount = amount
		s.inbox = append(s.inbox, r)
	}
	if err := rows.Err(); err != nil {
		return s, err
	}
	slices.SortFunc(s.inbox, func(a, b lab.Event) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.EventID, b.EventID),
			cmp.Compare(a.AccountID, b.AccountID), cmp.Compare(a.Amount, b.Amount))
	})
	return s, nil
}

// peek reads both tables for a stepper (see traceState) in the middle of
// a scheduled run, without waiting: on SQLite on a connection of the lab's
// whose busy timeout is 0 for the read, so that a lock held for a COMMIT
// answers at once instead of a wait on the bubble's clock,
// which would let the waiting sessions run. On PostgreSQL the control
// connection's read waits for no lock.
func (db *DB) peek() (snapshot, error) {
	if db.pg != nil {
		return db.snapshot(), nil
	}
	ctx := db.labCtx
	c, err := db.own.Conn(ctx)
	if err != nil {
		return snapshot{}, err
	}
	defer c.Close()
	var timeout int64
	if err := c.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&timeout); err != nil {
		return snapshot{}, err
	}
	if _, err := c.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
		return snapshot{}, err
	}
	defer c.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, timeout))
	rows, err := c.QueryContext(ctx, snapshotQuery("", "BIGINT"))
	if err != nil {
		return snapshot{}, err
	}
	return scanSnapshot(rows)
}

func (s snapshot) equal(t snapshot) bool { return s.diff(t) == "" }

// diff describes how t differs from s, or returns "".
func (s snapshot) diff(t snapshot) string {
	var parts []string
	for id, b := range s.balances {
		if t.balances[id] != b {
			parts = append(parts, fmt.Sprintf("account %d balance %d -> %d", id, b, t.balances[id]))
		}
	}
	slices.Sort(parts)
	for _, r := range t.inbox {
		if !slices.Contains(s.inbox, r) {
			parts = append(parts, "inbox gained "+r.String())
		}
	}
	for _, r := range s.inbox {
		if !slices.Contains(t.inbox, r) {
			parts = append(parts, "inbox lost "+r.String())
		}
	}
	return strings.Join(parts, "; ")
}
