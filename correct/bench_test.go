package correct_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/postgres"
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO entries (account_id, amount) VALUES ($1, $2)`, e.AccountID, e.Amount); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, e.Amount, e.AccountID); err != nil {
		return 0, err
	}
	return lab.Applied, tx.Commit()
}

func BenchmarkProcess(b *testing.B) {
	for _, d := range durabilities {
		for _, load := range []string{"bare", "distinct", "repeat"} {
			for _, deliverers := range []int{1, 8, 64} {
				// go test calls a benchmark's function once per round of its
				// ramp (b.N = 1, 100, …): the database is made once, in the
				// parent's directory, and kept for every round. Making it and
				// a few first deliveries are left out of the clock: timed,
				// they could make the first round, of one event, outlast
				// -benchtime on a busy machine and end the measurement there.
				var deliver func()
				var db *sql.DB
				b.Run(fmt.Sprintf("%s/%s/deliverers=%d", d.name, load, deliverers), func(sub *testing.B) {
					if deliver == nil {
						db, deliver = benchProcess(sub, b.TempDir(), d, load)
						for range 10 {
							deliver()
						}
						sub.ResetTimer()
					}
					drive(sub, deliverers, deliver)
				})
				if db != nil {
					db.Close()
				}
			}
		}
	}
}

// benchProcess makes a database in dir for one measurement and returns
// it with the delivery each deliverer makes.
func benchProcess(b *testing.B, dir string, d durability, load string) (*sql.DB, func()) {
	dsn := correct.DSN(filepath.Join(dir, "bench.db")) + d.pragmas
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1) // SQLite has one writer: see the package doc
	schema := correct.Schema + `
		CREATE TABLE entries (account_id INTEGER NOT NULL, amount INTEGER NOT NULL) STRICT;
		INSERT INTO accounts (id) VALUES (1);`
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		b.Fatal(err)
	}
	var h lab.Processor = correct.New(db)
	if load == "bare" {
		h = bare{db}
	}
	repeat := lab.Event{Source: "provider-a", EventID: "evt-repeat", AccountID: 1, Amount: 1}
	if load == "repeat" {
		if _, err := h.Process(context.Background(), repeat); err != nil {
			db.Close()
			b.Fatal(err)
		}
	}
	var n atomic.Int64
	return db, func() {
		e := repeat
		if load != "repeat" {
			e.EventID = fmt.Sprintf("evt-%d", n.Add(1))
		}
		if _, err := h.Process(context.Background(), e); err != nil {
			b.Error(err)
		}
	}
}

// drive calls deliver b.N times from deliverers goroutines (one: the
// benchmark's own) and reports events/s.
func drive(b *testing.B, deliverers int, deliver func()) {
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

// BenchmarkPostgres is BenchmarkProcess on PostgreSQL, at each isolation
// level, when IDEMLAB_PG names a server (it skips otherwise). Commits wait
// for the server's WAL flush (synchronous_commit = on, PostgreSQL's
// default). The events credit 16 accounts in turn, so that concurrent
// deliveries meet on a row now and then, as a busy service's do; at
// REPEATABLE READ and SERIALIZABLE such a meeting is a serialization
// failure, which Retry runs again. Besides events/s and applied/s it
// reports how often that happened, per 1,000 events: retries (attempts
// that failed with 40001 or 40P01 and were run again) and busy (deliveries
// Retry gave up on) and errors (deliveries that failed otherwise: rolled
// back, for the sender to deliver again). The bare work
// gets the same Retry, so the ratio is the inbox's cost, not the retry's.
// After the run, every balance must be the sum of what was recorded for
// it: nothing applied twice or half. The pool holds at most
// 32 connections: 64 deliverers queue for them, as they would in a
// service whose pool is smaller than its request concurrency.
func BenchmarkPostgres(b *testing.B) {
	server, admin := pgAdmin(b)
	for _, level := range lab.Isolations {
		for _, load := range []string{"bare", "distinct", "repeat"} {
			for _, deliverers := range []int{1, 8, 64} {
				var m *pgMeasure
				b.Run(fmt.Sprintf("%s/%s/deliverers=%d", levelSlug[level], load, deliverers), func(sub *testing.B) {
					if m == nil {
						m = newPGMeasure(sub, admin, server, level, 16)
						var inner lab.Processor = correct.New(m.db)
						if load == "bare" {
							inner, m.table = bare{m.db}, "entries"
						}
						h := postgres.Retry(counting{inner, &m.retries})
						repeat := lab.Event{Source: "provider-a", EventID: "evt-repeat", AccountID: 1, Amount: 1}
						if load == "repeat" {
							if _, err := h.Process(context.Background(), repeat); err != nil {
								sub.Fatal(err)
							}
						}
						var n atomic.Int64
						m.deliver = func() error {
							e := repeat
							if load != "repeat" {
								i := n.Add(1)
								e.EventID, e.AccountID = fmt.Sprintf("evt-%d", i), 1+i%16
							}
							_, err := h.Process(context.Background(), e)
							return err
						}
					}
					m.round(sub, deliverers)
				})
				m.close(admin)
			}
		}
	}
}

// levelSlug names an isolation level in a benchmark's name.
var levelSlug = map[lab.Isolation]string{lab.ReadCommitted: "pg-rc", lab.RepeatableRead: "pg-rr", lab.Serializable: "pg-ser"}

// counting counts the attempts of a handler that failed retryably.
type counting struct {
	h       lab.Processor
	retries *atomic.Int64
}

func (c counting) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	o, err := c.h.Process(ctx, e)
	if err != nil && lab.Retryable(err) {
		c.retries.Add(1)
	}
	return o, err
}

// pgMeasure is one PostgreSQL measurement: a schema of its own with
// accounts 1..n and the inbox (and the bare work's entries), a pool of at
// most 32 connections, and the delivery each deliverer makes. It is made
// once and run for every round of go test's ramp (b.N = 1, 100, …).
type pgMeasure struct {
	schema  string
	db      *sql.DB
	deliver func() error // one delivery, its answer's error
	table   string       // where the credits are recorded: inbox, or the bare work's entries
	retries atomic.Int64 // attempts that failed retryably, counted by counting
	warmed  bool         // the first deliveries are made
}

var pgSchemas atomic.Int64

// pgAdmin returns the PostgreSQL server a benchmark needs (it skips without
// one) and a pool on it for making and dropping each measurement's schema,
// closed when the benchmark ends.
func pgAdmin(b *testing.B) (server string, admin *sql.DB) {
	srv := labtest.NeedPostgres(b)
	admin, err := sql.Open("pgx", srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { admin.Close() })
	return srv.URL(), admin
}

func newPGMeasure(b *testing.B, admin *sql.DB, server string, level lab.Isolation, accounts int) *pgMeasure {
	m := &pgMeasure{schema: fmt.Sprintf("bench_%d_%d", os.Getpid(), pgSchemas.Add(1)), table: "inbox"}
	if _, err := admin.Exec("CREATE SCHEMA " + m.schema); err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(server)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", m.schema)
	q.Set("synchronous_commit", "on") // the lab's database turns it off for its scenarios
	u.RawQuery = q.Encode()
	if m.db, err = sql.Open("pgx", postgres.DSN(u.String(), level)); err != nil {
		b.Fatal(err)
	}
	m.db.SetMaxOpenConns(32)
	m.db.SetMaxIdleConns(32)
	if _, err := m.db.Exec(correct.PostgresSchema + fmt.Sprintf(`
		CREATE TABLE entries (account_id BIGINT NOT NULL, amount BIGINT NOT NULL);
		INSERT INTO accounts (id) SELECT generate_series(1, %d);`, accounts)); err != nil {
		b.Fatal(err)
	}
	return m
}

// round delivers b.N events from deliverers goroutines and reports
// events/s, applied/s and, per 1,000 events, retries, busy answers and
// other errors; then every balance must be what was recorded for it.
func (m *pgMeasure) round(b *testing.B, deliverers int) {
	if !m.warmed {
		// As in BenchmarkProcess: a few first deliveries, untimed, so
		// that the ramp's first round does not time a cold start.
		for range 10 {
			m.deliver()
		}
		m.warmed = true
	}
	warm(b, m.db, deliverers)
	m.retries.Store(0)
	var busy, failed atomic.Int64
	drive(b, deliverers, func() {
		err := m.deliver()
		switch {
		case err == nil:
		case errors.Is(lab.Classify(err), lab.ErrBusy):
			busy.Add(1)
		default:
			if failed.Add(1) == 1 {
				b.Logf("a delivery failed (rolled back): %v", err)
			}
		}
	})
	applied := b.N - int(busy.Load()+failed.Load())
	b.ReportMetric(float64(applied)/b.Elapsed().Seconds(), "applied/s")
	b.ReportMetric(float64(m.retries.Load())*1000/float64(b.N), "retries/1000")
	b.ReportMetric(float64(busy.Load())*1000/float64(b.N), "busy/1000")
	b.ReportMetric(float64(failed.Load())*1000/float64(b.N), "errors/1000")
	exactlyOnce(b, m.db, m.table)
}

// close drops the measurement's schema; m may be nil (its setup failed
// or the benchmark was not run).
func (m *pgMeasure) close(admin *sql.DB) {
	if m == nil {
		return
	}
	m.db.Close()
	admin.Exec("DROP SCHEMA " + m.schema + " CASCADE")
}

// warm opens the pool's connections before the clock starts: each costs a
// PostgreSQL backend process, and b.N's first, small rounds would
// otherwise time the connecting and choose too few events.
func warm(b *testing.B, db *sql.DB, deliverers int) {
	var conns []*sql.Conn
	for range min(deliverers, 32) {
		c, err := db.Conn(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	db.SetMaxIdleConns(32)
	for _, c := range conns {
		c.Close()
	}
	b.ResetTimer()
}

// exactlyOnce fails the benchmark unless every account's balance is the
// sum of the amounts recorded for it in table (inbox, or the bare work's
// entries): nothing applied twice, nothing half.
func exactlyOnce(b *testing.B, db *sql.DB, table string) {
	var wrong int
	var example string
	err := db.QueryRow(`SELECT count(*), coalesce(min(a.id || ': balance ' || a.balance || ', recorded ' || r.sum), '')
		FROM accounts a LEFT JOIN (SELECT account_id, sum(amount) AS sum FROM `+table+` GROUP BY account_id) r
		ON r.account_id = a.id WHERE a.balance <> coalesce(r.sum, 0)`).Scan(&wrong, &example)
	if err != nil {
		b.Fatal(err)
	}
	if wrong > 0 {
		b.Errorf("after the run: %d accounts' balances differ from the sum recorded for them (account %s), want none", wrong, example)
	}
}
