package labtest

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-sql-driver/mysql"

	"idemlab/lab"
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
	if err := srv.create(name, []string{`CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT) ENGINE=InnoDB`}, nil); err != nil {
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
		w, err := waitsMariaDB(srv.engine.(mariadbEngine).status, waiterID)
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
		if w, err := waitsMariaDB(srv.engine.(mariadbEngine).status, id); err != nil || w {
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

// TestSettleRealLooksAgain: once a waiter gets past its wait, settleReal
// looks again at the waiters it looked at before. A and B both wait, as in
// DistinctRace on MariaDB when B's credit closes the deadlock; B is the
// victim, and InnoDB rolls its transaction back, granting A its lock,
// before B's client reads the 1213 and parks before its ROLLBACK. A, looked
// at first, was still waiting then. The server here is a stand-in that
// answers in exactly that order, so the test is the same every run; the
// next decision must see both sessions parked, as it does when the server
// happens to roll B back before A is looked at.
func TestSettleRealLooksAgain(t *testing.T) {
	a := &session{name: "A", release: make(chan struct{}, 1), waiting: true, pid: 1}
	b := &session{name: "B", release: make(chan struct{}, 1), waiting: true, pid: 2}
	pg := &serverDB{}
	sc := &scheduler{db: &DB{pg: pg}, realtime: true, changed: make(chan struct{}, 1), sessions: []*session{a, b}}
	park := func(s *session, n int) {
		sc.mu.Lock()
		s.parkedAt = &stmt{Session: s.name, N: n}
		sc.mu.Unlock()
		sc.signal()
	}
	rolledBack := false
	var asked []string
	pg.script = func(pid uint32) (bool, error) {
		switch pid {
		case a.pid: // waits for B's shared lock until B's transaction is gone
			asked = append(asked, "A")
			if !rolledBack {
				return true, nil
			}
			park(a, 4) // its credit done, before its COMMIT
			return false, nil
		case b.pid: // the victim: rolled back, then parked before its ROLLBACK
			asked = append(asked, "B")
			rolledBack = true
			park(b, 4)
			return false, nil
		}
		t.Fatalf("asked about server process %d, which no session runs on", pid)
		return false, nil
	}
	sc.settleReal(true)
	if got := names(sc.parked()); !slices.Equal(got, []string{"A", "B"}) || sc.anyWaiting() {
		t.Errorf("after settleReal: parked %v, waiting %v (the server was asked %v); want A and B parked, none waiting",
			got, sc.waitingNames(), asked)
	}
}

// TestSettleRealWaitsOutADeadlockCheck: B's statement has just closed a
// deadlock with A, which waits already, and both are seen waiting, since
// B's thread has queued its lock request but not yet looked for a cycle.
// Neither is parked and no other session holds a transaction, so the two
// wait for each other and the server will end one: settleReal must not
// stop at a round that sees both waiting. The stand-in server ends the
// deadlock after that round, with A its victim and B granted its lock;
// both must be parked, none waiting, whenever the server gets to it.
func TestSettleRealWaitsOutADeadlockCheck(t *testing.T) {
	a := &session{name: "A", release: make(chan struct{}, 1), waiting: true, inTx: true, pid: 1}
	b := &session{name: "B", release: make(chan struct{}, 1), waiting: true, inTx: true, pid: 2}
	pg := &serverDB{}
	sc := &scheduler{db: &DB{pg: pg}, realtime: true, changed: make(chan struct{}, 1), sessions: []*session{a, b}}
	if !sc.waitsClosed() {
		t.Fatalf("waitsClosed() = false with A and B waiting and no other session, want true")
	}
	looks := 0
	var asked []string
	pg.script = func(pid uint32) (bool, error) {
		looks++
		s := map[uint32]*session{a.pid: a, b.pid: b}[pid]
		if s == nil {
			t.Fatalf("asked about server process %d, which no session runs on", pid)
		}
		asked = append(asked, s.name)
		if looks <= 2 { // before B's thread has looked for the cycle
			return true, nil
		}
		sc.mu.Lock()
		s.parkedAt = &stmt{Session: s.name, N: 4} // A before its ROLLBACK, B after its credit
		sc.mu.Unlock()
		sc.signal()
		return false, nil
	}
	sc.settleReal(false)
	if got := names(sc.parked()); !slices.Equal(got, []string{"A", "B"}) || sc.anyWaiting() {
		t.Errorf("after settleReal: parked %v, waiting %v (the server was asked %v); want A and B parked, none waiting",
			got, sc.waitingNames(), asked)
	}
	c := &session{name: "C", release: make(chan struct{}, 1), inTx: true, pid: 3}
	a.waiting, b.waiting = true, true
	sc.sessions = append(sc.sessions, c)
	if sc.waitsClosed() {
		t.Errorf("waitsClosed() = true with C inside a transaction, not waiting, want false: A and B may wait for C")
	}
}

// mariadbVariant is a variant whose MariaDB form sets the level as
// tx_isolation and a lock wait timeout of 1 s, as mariadb.DSN does with
// its own.
func mariadbVariant() lab.Variant {
	v := testVariant
	v.MariaDB = &lab.MariaDB{
		Schema: []string{`CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB`,
			`CREATE TABLE inbox (source VARCHAR(128), event_id VARCHAR(128), account_id BIGINT, amount BIGINT,
				PRIMARY KEY (source, event_id)) ENGINE=InnoDB`},
		DSN: func(server string, level lab.Isolation) string {
			cfg, err := mysql.ParseDSN(server)
			if err != nil {
				return server
			}
			cfg.Params = map[string]string{
				"tx_isolation":             "'" + strings.ToUpper(strings.ReplaceAll(string(level), " ", "-")) + "'",
				"innodb_lock_wait_timeout": "1",
			}
			return cfg.FormatDSN()
		},
	}
	return v
}

// TestMariaDBLevels holds the MariaDB engine to what each level of the
// axis and each way of opening asks of the variant's connections, read
// back from a connection of its pool: the level's tx_isolation,
// innodb_snapshot_isolation ON only at a level that asks for it, the
// variant's lock wait timeout on a database Open gives and none on one
// OpenScheduled gives (see untimedLockWait).
func TestMariaDBLevels(t *testing.T) {
	srv := NeedMariaDB(t)
	for _, level := range []Level{{Isolation: lab.ReadCommitted}, {Isolation: lab.RepeatableRead},
		{Isolation: lab.RepeatableRead, SnapshotIsolation: true}, {Isolation: lab.Serializable}} {
		r := NewServerRun(t, mariadbVariant(), srv, level)
		for _, c := range []struct {
			name string
			open func(...Account) *DB
			wait string
		}{{"Open", r.Open, "1"}, {"OpenScheduled", r.OpenScheduled, untimedLockWait}} {
			db := c.open()
			var iso, si, wait string
			if err := db.Pool().QueryRow(`SELECT @@tx_isolation, @@innodb_snapshot_isolation, @@innodb_lock_wait_timeout`).Scan(&iso, &si, &wait); err != nil {
				t.Fatal(err)
			}
			wantSI := map[bool]string{false: "0", true: "1"}[level.SnapshotIsolation]
			if want := strings.ToUpper(strings.ReplaceAll(string(level.Isolation), " ", "-")); iso != want || si != wantSI || wait != c.wait {
				t.Errorf("%+v, %s(): tx_isolation %s, innodb_snapshot_isolation %s, innodb_lock_wait_timeout %s; want %s, %s, %s",
					level, c.name, iso, si, wait, want, wantSI, c.wait)
			}
		}
		r.Close()
	}
}

// TestStatusReaderShares: a call made while a reading is under way is not
// answered by that reading, which may have been taken before the wait it
// asks about began, but by the next one; calls waiting together share
// that next reading.
func TestStatusReaderShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		readings := make(chan chan string)
		st := &statusReader{fetch: func() (string, error) {
			text := make(chan string)
			readings <- text
			return <-text, nil
		}}
		read := func() <-chan string {
			got := make(chan string, 1)
			go func() {
				text, err := st.read()
				if err != nil {
					t.Errorf("read() error %v, want none", err)
				}
				got <- text
			}()
			return got
		}
		first := read()
		reading1 := <-readings // the first call's reading is under way
		second, third := read(), read()
		synctest.Wait() // both wait for the next reading
		reading1 <- "reading 1"
		if got := <-first; got != "reading 1" {
			t.Errorf("the first call read %q, want %q", got, "reading 1")
		}
		(<-readings) <- "reading 2"
		for _, got := range []string{<-second, <-third} {
			if got != "reading 2" {
				t.Errorf("a call made during reading 1 read %q, want %q", got, "reading 2")
			}
		}
		synctest.Wait()
		select {
		case <-readings:
			t.Errorf("a third reading began; the two calls made during the first share the second")
		default:
		}
	})
}
