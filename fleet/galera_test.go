package fleet_test

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"idemlab/correct"
	"idemlab/fleet"
	"idemlab/lab"
)

// envGalera names the environment variable that points the fleet at a
// Galera cluster: its nodes' DSNs (go-sql-driver/mysql), space-separated,
// as .ci/galera-start prints them.
const envGalera = "IDEMLAB_GALERA"

// galeraStart is the script that starts the cluster's nodes, and starts
// again one that is down, which rejoins the others.
const galeraStart = "../.ci/galera-start"

// mariadbInbox is inboxQuery on MariaDB.
const mariadbInbox = `SELECT COUNT(*), COALESCE(SUM(account_id = 1 + CAST(SUBSTRING(event_id, 5) AS SIGNED) % 3
		AND amount = 1 + CAST(SUBSTRING(event_id, 5) AS SIGNED)), 0) FROM inbox`

// TestGalera is TestProcesses across a three-node Galera cluster: one
// receiver process per node (fleet.RoleInlineMariaDB, correct's MariaDB
// handler under mariadb.Retry), every event sent to all three at once.
// Two deliveries of one event, or two credits of one account, on
// different nodes do not wait for each other: each commits on its own
// node, and the cluster's certification fails the one ordered second,
// with 1213 at its COMMIT (or, aborted by the winner's write set, at its
// next statement); correct's retry runs it again, and it answers
// duplicate, or applies. After the 300th request receiver 0 is killed with
// SIGKILL and started again; after the 450th, database node 2 is, and
// .ci/galera-start starts it again, and it rejoins the cluster while
// receiver 1, its pool on that node, answers errors that the provider
// retries. Receiver 2 dies by SIGKILL after the COMMIT of the extra event,
// as in TestProcesses. Every delivery must end delivered; every event must
// be in the inbox once, as sent, on every node; each account's balance
// must be the sum of its events on every node; no event may be answered
// applied twice, and none answered 2xx without its inbox row. It runs at
// every level, although Galera's "Isolation Levels" page honours
// SERIALIZABLE only between transactions on one node and allows only
// REPEATABLE READ in multi-master use: across nodes every level is
// certified alike, and correct's guarantee rests on the key, not the
// level (docs/mariadb.md, "Where the documentation and the runs
// disagree"). It needs IDEMLAB_GALERA; without it, it skips with one
// line.
func TestGalera(t *testing.T) {
	dsns := strings.Fields(os.Getenv(envGalera))
	if len(dsns) == 0 {
		t.Skip(envGalera + ` is not set: eval "$(.ci/galera-start)" to run the fleet across a Galera cluster`)
	}
	if len(dsns) != Receivers {
		t.Fatalf("%s names %d nodes, want %d", envGalera, len(dsns), Receivers)
	}
	for _, level := range lab.Isolations {
		t.Run(strings.ReplaceAll(string(level), " ", "_"), func(t *testing.T) {
			b := newGaleraBurst(t, dsns, level)
			b.killAt(Events*Copies/3, "receiver", 0)
			b.killAt(Events*Copies/2, "node", 1)
			before := certCounters(t, b.urls)
			b.run()
			b.checkNodes()
			after := certCounters(t, b.urls)
			var lines []string
			for i := range b.urls {
				d := [2]int64{after[i][0] - before[i][0], after[i][1] - before[i][1]}
				if i == 1 {
					d = after[i] // restarted: its counters began again at 0
				}
				lines = append(lines, fmt.Sprintf("node %d: %d certification failures, %d brute-force aborts", i+1, d[0], d[1]))
			}
			t.Logf("the cluster's counters over the burst (node 2's since it restarted): %s", strings.Join(lines, "; "))
		})
	}
}

// galeraDBs counts the databases the Galera tests create.
var galeraDBs atomic.Int64

// newGaleraBurst creates a database on the cluster, with correct's MariaDB
// schema and accounts 1 to 3, and starts a receiver on each node.
func newGaleraBurst(t *testing.T, dsns []string, level lab.Isolation) *burst {
	name := fmt.Sprintf("idemlab_fleet_%d_%d", os.Getpid(), galeraDBs.Add(1))
	admin, err := sql.Open("mysql", dsns[0])
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4"); err != nil {
		t.Fatalf("CREATE DATABASE on node 1: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("mysql", dsns[0])
		if err == nil {
			_, err = admin.Exec("DROP DATABASE IF EXISTS " + name)
			admin.Close()
		}
		if err != nil {
			t.Errorf("dropping %s: %v", name, err)
		}
	})
	var urls []string
	for _, dsn := range dsns {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DBName = name
		urls = append(urls, cfg.FormatDSN())
	}
	b := &burst{t: t, urls: urls, role: fleet.RoleInlineMariaDB, level: level, addrs: make([]atomic.Pointer[string], Receivers),
		kills: map[int64]kill{}, dying: Receivers - 1, revived: make(chan error, 1), over: make(chan struct{}),
		inboxQuery: mariadbInbox, schedule: galeraSchedule(), aborts: true}
	b.restartNode = b.restartGaleraNode
	b.db = syncedPool(t, urls[0])
	for _, st := range correct.MariaDBSchema {
		if _, err := b.db.Exec(st); err != nil {
			t.Fatalf("creating the tables: %v", err)
		}
	}
	if _, err := b.db.Exec(`INSERT INTO accounts (id, balance) VALUES (1, 0), (2, 0), (3, 0)`); err != nil {
		t.Fatalf("creating the accounts: %v", err)
	}
	// Every node has the tables and accounts before its receiver starts.
	// The pool names no database: a node that has not yet applied the
	// CREATE DATABASE would refuse the connection itself (1049) before
	// wsrep_sync_wait could make it wait, so the read names the table.
	for i, dsn := range dsns {
		var n int
		db := syncedPool(t, dsn)
		if err := db.QueryRow(`SELECT COUNT(*) FROM ` + name + `.accounts`).Scan(&n); err != nil || n != 3 {
			t.Fatalf("node %d: %d accounts (%v), want 3", i+1, n, err)
		}
	}
	b.startAll(0)
	return b
}

// galeraSchedule is the provider's retry schedule on the cluster: every 20
// ms for a second, then every 200 ms for 80 s more. A killed node takes up
// to 20 s here to rejoin, and the deliveries to its receiver are answered
// errors all the while; the backoff keeps them from flooding the machine.
func galeraSchedule() []time.Duration {
	s := every20ms(50)
	for range 400 {
		s = append(s, 200*time.Millisecond)
	}
	return s
}

// syncedPool opens a pool on dsn whose reads wait until the node has
// applied every write set the cluster committed before them
// (wsrep_sync_wait = 1), closed when the test ends. Without it a read on
// one node may not see a transaction another node has committed and
// acknowledged: MariaDB's Galera "Known Limitations" page calls it a stale
// read and prescribes wsrep_sync_wait.
func syncedPool(t *testing.T, dsn string) *sql.DB {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["wsrep_sync_wait"] = "1"
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// restartGaleraNode kills database node i+1's mariadbd with SIGKILL, waits
// for it to be gone, and runs .ci/galera-start, which starts it again and
// returns once it has rejoined the cluster and is synced.
func (b *burst) restartGaleraNode(i int) error {
	admin, err := sql.Open("mysql", b.urls[i])
	if err != nil {
		return err
	}
	var pidFile string
	err = admin.QueryRow(`SELECT @@pid_file`).Scan(&pidFile)
	admin.Close()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return err
	}
	var pid int
	if _, err := fmt.Sscan(string(data), &pid); err != nil {
		return fmt.Errorf("%s: %v", pidFile, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill -KILL %d: %v", pid, err)
	}
	if err := waitGone(pid, time.Minute); err != nil {
		return err
	}
	start := time.Now()
	out, err := exec.Command(galeraStart).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", galeraStart, err, out)
	}
	b.t.Logf("node %d (pid %d) killed with SIGKILL, started again by %s and synced in %v: %s", i+1, pid, galeraStart,
		time.Since(start).Round(time.Millisecond), strings.TrimSpace(lastLine(string(out), "galera-start: ready")))
	return nil
}

// waitGone waits until process pid no longer runs: gone, or a zombie (a
// server started with setsid has init for a parent, which may reap it
// late), asking /proc every 10 ms.
func waitGone(pid int, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil
		}
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d still runs %v after SIGKILL", pid, bound)
		}
		<-time.After(10 * time.Millisecond)
	}
}

// lastLine returns the last line of out that starts with prefix, or "".
func lastLine(out, prefix string) string {
	var found string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, prefix) {
			found = line
		}
	}
	return found
}

// checkNodes reads every node, once each has applied what the cluster
// committed: the same balances, and the same inbox of Events+1 rows as
// sent.
func (b *burst) checkNodes() {
	t := b.t
	var first string
	for i, u := range b.urls {
		db := syncedPool(t, u)
		var inbox, right int
		if err := db.QueryRow(b.inboxQuery).Scan(&inbox, &right); err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
		var balances string
		if err := db.QueryRow(`SELECT GROUP_CONCAT(id, '=', balance ORDER BY id) FROM accounts`).Scan(&balances); err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
		if inbox != Events+1 || right != Events+1 {
			t.Errorf("node %d: inbox %d rows, %d of them as sent; want %d", i+1, inbox, right, Events+1)
		}
		if i == 0 {
			first = balances
		} else if balances != first {
			t.Errorf("node %d: balances %s, node 1 %s: the nodes disagree", i+1, balances, first)
		}
	}
}

// certCounters reads each node's wsrep_local_cert_failures (its local
// transactions that failed certification at COMMIT) and
// wsrep_local_bf_aborts (its local transactions aborted by a write set
// from another node).
func certCounters(t *testing.T, urls []string) [][2]int64 {
	var out [][2]int64
	for i, u := range urls {
		db, err := sql.Open("mysql", u)
		if err != nil {
			t.Fatal(err)
		}
		var c [2]int64
		for j, name := range []string{"wsrep_local_cert_failures", "wsrep_local_bf_aborts"} {
			var n string
			if err := db.QueryRow(`SHOW GLOBAL STATUS LIKE '`+name+`'`).Scan(&n, &c[j]); err != nil {
				t.Fatalf("node %d: %s: %v", i+1, name, err)
			}
		}
		db.Close()
		out = append(out, c)
	}
	return out
}
