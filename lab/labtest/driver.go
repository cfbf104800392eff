package labtest

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
)

// This file is the statement-hooking driver: a driver.Connector that wraps
// modernc's and sees every BEGIN, statement, COMMIT and ROLLBACK a handler
// issues. Around each one it calls the DB's before and after (see db.go),
// which record the transcript, inject faults and park the session for the
// scheduler. The variant code above it is unchanged production code: it only
// ever sees database/sql.
//
// Only calls whose context carries a session (withSession) are hooked; the
// lab's own reads of the database pass straight through.

// stepper is what the connector calls around each step of a session.
type stepper interface {
	before(ctx context.Context, s *stmt) error
	after(ctx context.Context, s *stmt, r *stmtResult) error
	// pageLimit is the max_page_count every connection must have before its
	// next step: 0 for none. It is how a full disk is simulated.
	pageLimit() int64
	// began tells that a session opened a transaction (a database/sql Tx),
	// ended that it is over, whoever ended it: the handler, the driver
	// after an injected failure, or database/sql's own goroutine once the
	// context is done. A session is inside a transaction while it has one
	// open, whichever connection its next statement runs on.
	began(ctx context.Context) *openTx
	ended(tx *openTx)
	// blind refuses a call whose context can never be done, made for a
	// delivery: SQLite would wait for a lock in real time (see DB.blind).
	blind(ctx context.Context) error
	// stallFor returns the stall that stops s once it has run, or nil;
	// stallAt stops there until released; missed records why a stall did
	// not stop its delivery (see HoldDelivery).
	stallFor(s *stmt) *stall
	stallAt(st *stall, s *stmt, wrapped bool)
	missed(st *stall, why string)
	// told logs the error a statement's handler gets instead of its result.
	told(s *stmt, err error)
}

// connector wraps a modernc connector so that every connection it makes is
// hooked.
type connector struct {
	base  driver.Connector
	hooks stepper
	begin string    // what BEGIN looks like on this DSN, for transcripts
	pg    *serverDB // on a server: where to record each connection's session
}

// Connect implements driver.Connector.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	base, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cn := &conn{base: base, c: c}
	if c.pg != nil {
		cn.pid = c.pg.srv.engine.pid(base)
		c.pg.connected(cn.pid)
	}
	return cn, nil
}

// Driver implements driver.Connector.
func (c *connector) Driver() driver.Driver { return c.base.Driver() }

// conn is one hooked connection. It forwards every optional interface that
// database/sql looks for, so that the pool behaves as it does unhooked.
type conn struct {
	base  driver.Conn
	c     *connector
	inTx  bool   // between a successful BEGIN and its COMMIT or ROLLBACK
	pages int64  // the max_page_count this connection has, 0 for SQLite's default
	pid   uint32 // PostgreSQL: the connection's server process
	// lost: the lab closed it under the handler, the connection of a
	// stalled delivery's process that is gone (see execStalled); every
	// call then fails with errLost, and the pool discards it.
	lost bool
	// lastExec is the session whose Exec ran last on it, "" for none.
	lastExec string
}

// errLost is what a lost connection answers: driver.ErrBadConn, which
// database/sql reads as "the call was never sent".
var errLost = fmt.Errorf("lab: the stalled delivery's connection is gone: %w", driver.ErrBadConn)

// noPageLimit is SQLite's default max_page_count.
const noPageLimit = 4294967294

// limitPages gives the connection the page limit the lab asks for, before a
// step. PRAGMA max_page_count belongs to one connection, so each one is told
// on its own; a write that needs a page beyond the limit fails with
// SQLITE_FULL, as on a full disk.
func (c *conn) limitPages() error {
	want := c.c.hooks.pageLimit()
	if want == c.pages || c.c.pg != nil {
		return nil
	}
	n := want
	if n == 0 {
		n = noPageLimit
	}
	if _, err := c.base.(driver.ExecerContext).ExecContext(context.Background(), fmt.Sprintf("PRAGMA max_page_count = %d", n), nil); err != nil {
		return fmt.Errorf("lab: setting max_page_count: %w", err)
	}
	c.pages = want
	return nil
}

var (
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

// Unwrap returns the modernc connection, for code that needs its extensions.
func (c *conn) Unwrap() driver.Conn { return c.base }

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) Close() error {
	if c.lost {
		return nil // closed already, by execStalled
	}
	return c.base.Close()
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	begin := c.c.begin
	if opts.ReadOnly {
		begin = "BEGIN" // modernc ignores _txlock for read-only transactions
	}
	s, err := c.start(ctx, begin, nil, false)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.base.(driver.ConnBeginTx).BeginTx(ctx, opts)
	}
	tx, err := c.base.(driver.ConnBeginTx).BeginTx(ctx, opts)
	var open *openTx
	if err == nil {
		open = c.c.hooks.began(ctx)
	}
	if err := c.c.hooks.after(ctx, s, &stmtResult{Err: err, Rows: -1, InTx: err == nil}); err != nil {
		if tx != nil {
			tx.Rollback() // an injected failure after BEGIN must not leave it open
			c.c.hooks.ended(open)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	c.inTx = true
	return &hookedTx{base: tx, ctx: ctx, c: c, open: open}, nil
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.lost {
		return nil, errLost
	}
	if err := c.c.hooks.blind(ctx); err != nil {
		return nil, err
	}
	st, err := c.base.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &hookedStmt{base: st, query: query, c: c}, nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(ctx, query, args, func(args []driver.NamedValue) (driver.Result, error) {
		return c.base.(driver.ExecerContext).ExecContext(ctx, query, args)
	})
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.query(ctx, query, args, func(args []driver.NamedValue) (driver.Rows, error) {
		return c.base.(driver.QueryerContext).QueryContext(ctx, query, args)
	})
}

func (c *conn) Ping(ctx context.Context) error {
	if c.lost {
		return errLost
	}
	return c.base.(driver.Pinger).Ping(ctx)
}

func (c *conn) ResetSession(ctx context.Context) error {
	if c.lost {
		return driver.ErrBadConn
	}
	return c.base.(driver.SessionResetter).ResetSession(ctx)
}

// IsValid forwards to the base connection when it can tell (modernc's
// can; pgx's stdlib connection reports a broken one from ResetSession).
func (c *conn) IsValid() bool {
	if c.lost {
		return false
	}
	if v, ok := c.base.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.base.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// before prepares a step of a session: the connection gets the page limit
// the lab asks for, then the hooks see the statement (and may park or fail
// it).
func (c *conn) before(ctx context.Context, s *stmt) error {
	if err := c.c.hooks.blind(ctx); err != nil {
		return err
	}
	if err := c.limitPages(); err != nil {
		return err
	}
	s.pid, s.connExec = c.pid, c.lastExec
	return c.c.hooks.before(ctx, s)
}

// start describes a statement about to run on c and calls the before
// hooks: nil, and no error, for a call of no session, which runs unhooked
// unless blind refuses it. exec says the statement runs as an Exec.
func (c *conn) start(ctx context.Context, query string, args []driver.NamedValue, exec bool) (*stmt, error) {
	if c.lost {
		return nil, errLost
	}
	s := newStmt(ctx, opOf(query), query, args)
	if s == nil {
		return nil, c.c.hooks.blind(ctx)
	}
	s.exec = exec
	return s, c.before(ctx, s)
}

// exec runs one hooked statement that returns a Result.
func (c *conn) exec(ctx context.Context, query string, args []driver.NamedValue, run func([]driver.NamedValue) (driver.Result, error)) (driver.Result, error) {
	s, err := c.start(ctx, query, args, true)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return run(args)
	}
	if st := c.c.hooks.stallFor(s); st != nil {
		return c.execStalled(ctx, s, st, run)
	}
	res, err := run(s.Args)
	c.lastExec = s.Session
	c.spelled(s.Op, err)
	r := &stmtResult{Err: err, Rows: -1, InTx: c.inTx}
	if err == nil {
		r.RowsAffected, _ = res.RowsAffected()
	}
	if err := c.c.hooks.after(ctx, s, r); err != nil {
		return nil, err
	}
	return res, err
}

// query runs one hooked statement that returns rows. The rows are wrapped so
// that the transcript can show what the statement found once they are read.
func (c *conn) query(ctx context.Context, query string, args []driver.NamedValue, run func([]driver.NamedValue) (driver.Rows, error)) (driver.Rows, error) {
	s, err := c.start(ctx, query, args, false)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return run(args)
	}
	rows, err := run(s.Args)
	c.spelled(s.Op, err)
	r := &stmtResult{Err: err, InTx: c.inTx}
	if err := c.c.hooks.after(ctx, s, r); err != nil {
		if rows != nil {
			rows.Close()
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return &hookedRows{base: rows, r: r}, nil
}

// spelled records in inTx what a BEGIN, COMMIT or ROLLBACK the handler
// wrote as a statement of its own (conn.ExecContext(ctx, "BEGIN
// IMMEDIATE") on a db.Conn) did, as BeginTx and hookedTx do for
// database/sql's transactions: the scheduler lets sessions waiting for the
// write lock retry it only after a step that leaves its session outside
// a transaction, so a transaction it did not see would let them retry, on
// the fake clock, after each of its statements, and run out of their busy
// timeout while it still holds the lock. A BEGIN that succeeds opens a
// transaction; a COMMIT or ROLLBACK that succeeds, or that finds none
// open, ends it; one that fails otherwise leaves it open (SQLite keeps
// the transaction of a COMMIT that failed with SQLITE_BUSY).
func (c *conn) spelled(op Op, err error) {
	switch {
	case op == OpBegin && err == nil:
		c.inTx = true
	case op == OpCommit || op == OpRollback:
		if err == nil || strings.Contains(err.Error(), "no transaction is active") {
			c.inTx = false
		}
	}
}

// hookedTx sees COMMIT and ROLLBACK. database/sql gives Commit and Rollback no
// context, so the one given to BeginTx names the session.
type hookedTx struct {
	base driver.Tx
	ctx  context.Context
	c    *conn
	open *openTx
}

// Commit runs the hooks around COMMIT (end).
func (t *hookedTx) Commit() error { return t.end(OpCommit, t.base.Commit) }

// Rollback runs the hooks around ROLLBACK (end).
func (t *hookedTx) Rollback() error { return t.end(OpRollback, t.base.Rollback) }

// end runs the hooks around the COMMIT or ROLLBACK (op) that ends t, and
// run, which does it, between them. A failure injected before a COMMIT
// rolls the transaction back for real, as a failed COMMIT does: the handler
// must be able to trust that an error from Commit left nothing behind. A
// ROLLBACK runs even when a failure is injected before it: a connection
// must never go back to the pool inside a transaction.
func (t *hookedTx) end(op Op, run func() error) error {
	t.c.inTx = false
	s := newStmt(t.ctx, op, string(op), nil)
	if s == nil && t.c.lost {
		return errLost
	}
	if s == nil {
		return run()
	}
	defer t.c.c.hooks.ended(t.open) // once the step is logged
	s.pid, s.connExec = t.c.pid, t.c.lastExec
	injected := t.c.c.hooks.before(t.ctx, s)
	if injected != nil && op == OpCommit {
		if !t.c.lost {
			t.base.Rollback()
		}
		return injected
	}
	err := errLost
	if !t.c.lost {
		err = run()
	}
	if err := t.c.c.finish(t.ctx, s, err); err != nil {
		return err
	}
	return injected
}

// finish calls the after hook for a statement that ends a transaction.
func (c *connector) finish(ctx context.Context, s *stmt, err error) error {
	if hookErr := c.hooks.after(ctx, s, &stmtResult{Err: err, Rows: -1}); hookErr != nil {
		return hookErr
	}
	return err
}

// hookedStmt is a prepared statement whose executions are hooked like direct
// ones.
type hookedStmt struct {
	base  driver.Stmt
	query string
	c     *conn
}

func (s *hookedStmt) Close() error  { return s.base.Close() }
func (s *hookedStmt) NumInput() int { return s.base.NumInput() }

func (s *hookedStmt) Exec(args []driver.Value) (driver.Result, error) {
	return nil, errors.New("lab: stmt.Exec without a context is not supported")
}

func (s *hookedStmt) Query(args []driver.Value) (driver.Rows, error) {
	return nil, errors.New("lab: stmt.Query without a context is not supported")
}

func (s *hookedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.exec(ctx, s.query, args, func(args []driver.NamedValue) (driver.Result, error) {
		return s.base.(driver.StmtExecContext).ExecContext(ctx, args)
	})
}

func (s *hookedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.query(ctx, s.query, args, func(args []driver.NamedValue) (driver.Rows, error) {
		return s.base.(driver.StmtQueryContext).QueryContext(ctx, args)
	})
}

// hookedRows remembers what a SELECT returned, for the transcript.
type hookedRows struct {
	base driver.Rows
	r    *stmtResult
	seen int
}

func (r *hookedRows) Columns() []string { return r.base.Columns() }

func (r *hookedRows) Close() error {
	r.r.Rows = r.seen
	return r.base.Close()
}

func (r *hookedRows) Next(dest []driver.Value) error {
	err := r.base.Next(dest)
	if err == nil {
		r.seen++
		if r.seen == 1 {
			r.r.First = append([]driver.Value(nil), dest...)
		}
	}
	return err
}

// describe renders a statement's result the way a transcript shows it.
func (r *stmtResult) describe(op Op) string {
	switch {
	case r.NotRun:
		return "not run: " + r.Err.Error()
	case r.Err != nil:
		return "error: " + r.Err.Error()
	case r.Rows == 0:
		return "no row"
	case r.Rows == 1:
		return "(" + joinValues(r.First) + ")"
	case r.Rows > 1:
		return fmt.Sprintf("%d rows, first (%s)", r.Rows, joinValues(r.First))
	case op == OpInsert || op == OpUpdate || op == OpDelete:
		if r.RowsAffected == 1 {
			return "1 row"
		}
		return fmt.Sprintf("%d rows", r.RowsAffected)
	}
	return "ok"
}

func joinValues(vs []driver.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = literal(v)
	}
	return strings.Join(parts, ", ")
}
