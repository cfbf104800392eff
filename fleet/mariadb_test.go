package fleet

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"

	"idemlab/lab"
	"idemlab/mariadb"
)

// This file is the fleet on MariaDB, one receiver per node of a Galera
// cluster (RoleInlineMariaDB): correct's MariaDB handler under
// mariadb.Retry, each receiver's pool on its own node.
//
// On a Galera cluster two deliveries of one event, or two credits of one
// account, running on different nodes do not wait for each other: row
// locks are local to a node. Each commits on its own node, and at COMMIT
// its write set is certified against those the cluster ordered before it;
// the loser fails certification, and its client gets 1213, "Deadlock found
// when trying to get lock", at COMMIT. A local transaction whose rows a
// write set from another node needs is aborted instead (a brute-force
// abort), and its client gets 1213 at its next statement, whichever that
// is (mariadb.TestGaleraCertification). Either way nothing of it was
// kept, and correct's handler returns the 1213, busy and retryable, for
// mariadb.Retry to run the delivery again: its INSERT then finds the row
// the winner committed, and it answers duplicate, or, for another event
// of the same account, applies. Aborts counts the 1213s a receiver's pool
// met, and where, and GET /aborts reports them.

// RoleInlineMariaDB is a receiver that applies the credit before it
// answers, as RoleInline does, with correct's MariaDB handler on a MariaDB
// (or Galera) database named by a go-sql-driver/mysql DSN.
const RoleInlineMariaDB = "inline-mariadb"

// Aborts counts the deadlock errors (1213) the statements of a pool met:
// at COMMIT (on Galera, a failed certification), and at any other
// statement (a deadlock, or on Galera a brute-force abort by a write set
// from another node).
type Aborts struct {
	Commit, Statement atomic.Int64
}

// count records err if it is a 1213.
func (a *Aborts) count(err error, commit bool) {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1213 {
		return
	}
	if commit {
		a.Commit.Add(1)
	} else {
		a.Statement.Add(1)
	}
}

// ServeHTTP answers GET /aborts with the counts: "commit 3 statement 1".
func (a *Aborts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "commit %d statement %d\n", a.Commit.Load(), a.Statement.Load())
}

// openMariaDB opens a pool on the MariaDB database at dsn with
// mariadb.DSN's settings at level, whose connections count their 1213s in
// the returned Aborts.
func openMariaDB(dsn string, level lab.Isolation) (*sql.DB, *Aborts, error) {
	cfg, err := mysql.ParseDSN(mariadb.DSN(dsn, level))
	if err != nil {
		return nil, nil, err
	}
	base, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	a := &Aborts{}
	return sql.OpenDB(countingConnector{base: base, aborts: a}), a, nil
}

// countingConnector makes connections that count their 1213s. Each
// forwards every optional interface go-sql-driver/mysql's connection has,
// so that database/sql uses the pool as it would unwrapped.
type countingConnector struct {
	base   driver.Connector
	aborts *Aborts
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: cn, aborts: c.aborts}, nil
}

func (c countingConnector) Driver() driver.Driver { return c.base.Driver() }

type countingConn struct {
	driver.Conn
	aborts *Aborts
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	c.aborts.count(err, false)
	if err != nil {
		return nil, err
	}
	return countingTx{Tx: tx, aborts: c.aborts}, nil
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
	c.aborts.count(err, false)
	return r, err
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	c.aborts.count(err, false)
	return r, err
}

func (c *countingConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *countingConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *countingConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

func (c *countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

type countingTx struct {
	driver.Tx
	aborts *Aborts
}

func (t countingTx) Commit() error {
	err := t.Tx.Commit()
	t.aborts.count(err, true)
	return err
}
