package correct_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
)

// open creates a database at a fresh path with correct's schema and one
// account, and opens a pool on dsn(path).
func open(t testing.TB, dsn func(string) string) *sql.DB {
	t.Helper()
	return openIn(t, t.TempDir(), dsn)
}

// openIn is open with the database file in dir.
func openIn(t testing.TB, dir string, dsn func(string) string) *sql.DB {
	t.Helper()
	c, err := sqlite.NewConnector(dsn(filepath.Join(dir, "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(correct.Schema + `INSERT INTO accounts (id) VALUES (1);`); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestWithoutForeignKeys opens the handler on a DSN that lacks
// foreign_keys(1), as a user who builds a DSN of their own might: an event
// for a missing account must still not be answered "applied", and must
// leave nothing behind.
func TestWithoutForeignKeys(t *testing.T) {
	db := open(t, func(path string) string {
		return strings.Replace(correct.DSN(path), "_pragma=foreign_keys(1)&", "", 1)
	})
	h := correct.New(db)
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 99, Amount: 500}
	o, err := h.Process(context.Background(), e)
	if !errors.Is(err, lab.ErrUnknownAccount) {
		t.Errorf("Process(%v) on a DSN without foreign keys = %v, %v, want an error (unknown account)", e, o, err)
	}
	var rows int
	if err := db.QueryRow(`SELECT count(*) FROM inbox`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("inbox rows after Process(%v) = %d, want 0", e, rows)
	}
}

// longBurst makes TestBurst long enough to show why the pool has one
// connection; CI runs it.
var longBurst = flag.Bool("correct.longburst", false, "run TestBurst with 5,000 distinct events and 1,000 repeats (about 10 s on a quiet disk) instead of 1,500 and 500")

// TestBurst uses the handler as a library the way a busy receiver would: 64
// goroutines share one pool and deliver distinct events, some of them
// twice, in an order that mixes repeats with first deliveries. On the pool
// the package recommends — one connection, since SQLite has one writer —
// every event is applied exactly once and no delivery fails. (With one
// connection per goroutine, the writers instead poll SQLite's lock, and
// under a burst this long some of them outwait the busy timeout: 63 and 86
// of 5,000 distinct deliveries failed in two runs here with a connection
// per goroutine, against 0 on one connection. Only a burst that long shows
// it: a shorter one ends before anyone has waited five seconds, so the
// long one runs with -correct.longburst, in CI.)
func TestBurst(t *testing.T) {
	distinct, repeated, workers := 1500, 500, 64
	if *longBurst {
		distinct, repeated = 5000, 1000
	}
	// The default burst checks exactly once under 64 goroutines, which a
	// memory-backed file (/dev/shm, where the machine has one) shows in a
	// quarter of the time a disk's fsyncs take; the long burst is about
	// waiting for the write lock, so it runs on the disk, whose commits
	// make the writers wait.
	dir := t.TempDir()
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() && !*longBurst {
		if shm, err := os.MkdirTemp("/dev/shm", "idemlab-burst-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(shm) })
			dir = shm
		}
	}
	db := openIn(t, dir, correct.DSN)
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`INSERT INTO accounts (id) VALUES (2), (3), (4)`); err != nil {
		t.Fatal(err)
	}
	var events []lab.Event
	for i := range distinct {
		events = append(events, lab.Event{Source: "provider-a", EventID: fmt.Sprintf("evt-%d", i),
			AccountID: int64(1 + i%4), Amount: int64(1 + i%7)})
		if i%5 == 0 && i/5 < repeated {
			events = append(events, events[len(events)-1-i%2])
		}
	}
	h := correct.New(db)
	var mu sync.Mutex
	outcomes := map[lab.Outcome]int{}
	var failures []error
	var wg sync.WaitGroup
	next := make(chan lab.Event)
	for range workers {
		wg.Go(func() {
			for e := range next {
				o, err := h.Process(context.Background(), e)
				mu.Lock()
				if err != nil {
					failures = append(failures, err)
				} else {
					outcomes[o]++
				}
				mu.Unlock()
			}
		})
	}
	for _, e := range events {
		next <- e
	}
	close(next)
	wg.Wait()

	if len(failures) > 0 {
		t.Errorf("%d of %d deliveries failed, want 0; the first: %v", len(failures), len(events), failures[0])
	}
	if outcomes[lab.Applied] != distinct || outcomes[lab.Duplicate] != len(events)-distinct {
		t.Errorf("outcomes = %d applied, %d duplicate, want %d, %d",
			outcomes[lab.Applied], outcomes[lab.Duplicate], distinct, len(events)-distinct)
	}
	var rows, total, want int64
	if err := db.QueryRow(`SELECT count(*), (SELECT sum(balance) FROM accounts) FROM inbox`).Scan(&rows, &total); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range events {
		if !seen[e.EventID] {
			seen[e.EventID] = true
			want += e.Amount
		}
	}
	if rows != int64(distinct) || total != want {
		t.Errorf("after the burst: %d inbox rows, balances summing to %d, want %d, %d", rows, total, distinct, want)
	}
}
