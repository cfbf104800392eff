package labtest

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// innodbStatus is SHOW ENGINE INNODB STATUS's text, cut down, as 10.11
// writes it: a deadlock long gone in which thread 7 waited, then the
// transactions now, in which thread 8 waits and thread 7 does not.
const innodbStatus = `
=====================================
BACKGROUND THREAD
------------------------
LATEST DETECTED DEADLOCK
------------------------
*** (1) TRANSACTION:
TRANSACTION 101, ACTIVE 0 sec starting index read
LOCK WAIT 4 lock struct(s), heap size 1128, 2 row lock(s)
MariaDB thread id 7, OS thread handle 1, query id 9 localhost idemlab Updating
------------
TRANSACTIONS
------------
Trx id counter 120
---TRANSACTION 118, ACTIVE 1 sec starting index read
mysql tables in use 1, locked 1
LOCK WAIT 2 lock struct(s), heap size 1128, 1 row lock(s)
MariaDB thread id 8, OS thread handle 2, query id 30 localhost idemlab Updating
------- TRX HAS BEEN WAITING 1 SEC FOR THIS LOCK TO BE GRANTED:
---TRANSACTION 117, ACTIVE 2 sec
2 lock struct(s), heap size 1128, 1 row lock(s)
MariaDB thread id 7, OS thread handle 3, query id 29 localhost idemlab
---TRANSACTION 116, ACTIVE 2 sec
MariaDB thread id 78, OS thread handle 4, query id 28 localhost idemlab
--------
FILE I/O
--------
`

// TestLockWaitIn: only the TRANSACTIONS section counts, and a thread id
// is matched whole (7 is not 78).
func TestLockWaitIn(t *testing.T) {
	for _, c := range []struct {
		id   int64
		want bool
	}{{8, true}, {7, false}, {78, false}, {9, false}} {
		if got := lockWaitIn(innodbStatus, c.id); got != c.want {
			t.Errorf("lockWaitIn(status, %d) = %v, want %v", c.id, got, c.want)
		}
	}
}

// TestMariaDBWaitDetector holds waitsMariaDB to a real server: a session
// waiting for a row another holds is seen waiting, polled as fast as the
// scheduler polls; the holder and an idle session are not.
func TestMariaDBWaitDetector(t *testing.T) {
	srv := NeedMariaDB(t)
	ctx := context.Background()
	name := srv.name + "_detector"
	if err := setupMariaDB(srv, name, []string{`CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT) ENGINE=InnoDB`}, nil); err != nil {
		t.Fatal(err)
	}
	conn := func() (*sql.Conn, int64) {
		c, err := srv.control.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		var id int64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		return c, id
	}
	holder, holderID := conn()
	waiter, waiterID := conn()
	_, idleID := conn()
	for _, st := range []string{"INSERT INTO " + name + ".t VALUES (1, 0)", "BEGIN", "UPDATE " + name + ".t SET v = 1 WHERE id = 1"} {
		if _, err := holder.ExecContext(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, "UPDATE "+name+".t SET v = 2 WHERE id = 1")
		done <- err
	}()
	seen := false
	for deadline := time.Now().Add(10 * time.Second); !seen && time.Now().Before(deadline); {
		w, err := waitsMariaDB(srv.control, waiterID)
		if err != nil {
			t.Fatal(err)
		}
		seen = w
		select {
		case err := <-done:
			t.Fatalf("the waiting UPDATE ended (%v) before it was seen waiting", err)
		case <-time.After(pollEvery):
		}
	}
	if !seen {
		t.Fatalf("waitsMariaDB(waiter %d) = false for 10 s, want true", waiterID)
	}
	for _, id := range []int64{holderID, idleID} {
		if w, err := waitsMariaDB(srv.control, id); err != nil || w {
			t.Errorf("waitsMariaDB(%d, not waiting) = %v, %v, want false", id, w, err)
		}
	}
	if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("the waiting UPDATE, once the holder committed: %v", err)
	}
}
