package correct_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
)

// What idempotency costs. BenchmarkProcess measures the correct handler on
// a real file against the bare work it protects — the same credit and a
// row recorded, in one transaction, but with no inbox key to consult — in
// three durability settings, with 1, 8 and 64 deliverers sharing the
// recommended one-connection pool, for distinct events and for repeats.
// Each reports events/s; go run ./cmd/lab bench prints them as ratios to
// the bare baseline measured in the same run, since a noisy machine makes
// only ratios meaningful. Compare runs with benchstat.

// durability is a journal mode and a synchronous setting.
type durability struct{ name, pragmas string }

var durabilities = []durability{
	{"DELETE-FULL", "&_pragma=journal_mode(DELETE)&_pragma=synchronous(FULL)"},
	{"WAL-FULL", "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"},
	{"WAL-NORMAL", "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"},
}

// bare does the work of one event without the inbox: a row that is not a
// key, and the credit.
type bare struct{ db *sql.DB }

func (b bare) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO entries (account_id, amount) VALUES (?, ?)`, e.AccountID, e.Amount); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = ?`, e.Amount, e.AccountID); err != nil {
		return 0, err
	}
	return lab.Applied, tx.Commit()
}

func BenchmarkProcess(b *testing.B) {
	for _, d := range durabilities {
		for _, load := range []string{"bare", "distinct", "repeat"} {
			for _, deliverers := range []int{1, 8, 64} {
				b.Run(fmt.Sprintf("%s/%s/deliverers=%d", d.name, load, deliverers), func(b *testing.B) {
					benchProcess(b, d, load, deliverers)
				})
			}
		}
	}
}

func benchProcess(b *testing.B, d durability, load string, deliverers int) {
	dsn := correct.DSN(filepath.Join(b.TempDir(), "bench.db")) + d.pragmas
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(1) // SQLite has one writer: see the package doc
	schema := correct.Schema + `
		CREATE TABLE entries (account_id INTEGER NOT NULL, amount INTEGER NOT NULL) STRICT;
		INSERT INTO accounts (id) VALUES (1);`
	if _, err := db.Exec(schema); err != nil {
		b.Fatal(err)
	}
	var h lab.Processor = correct.New(db)
	if load == "bare" {
		h = bare{db}
	}
	repeat := lab.Event{Source: "provider-a", EventID: "evt-repeat", AccountID: 1, Amount: 1}
	if load == "repeat" {
		if _, err := h.Process(context.Background(), repeat); err != nil {
			b.Fatal(err)
		}
	}
	var n atomic.Int64
	deliver := func() {
		e := repeat
		if load != "repeat" {
			e.EventID = fmt.Sprintf("evt-%d", n.Add(1))
		}
		if _, err := h.Process(context.Background(), e); err != nil {
			b.Error(err)
		}
	}
	if deliverers == 1 {
		for b.Loop() {
			deliver()
		}
	} else {
		// RunParallel runs parallelism × GOMAXPROCS goroutines.
		b.SetParallelism(max(1, deliverers/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				deliver()
			}
		})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
