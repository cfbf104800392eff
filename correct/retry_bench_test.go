package correct_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/postgres"
)

// BenchmarkRetry compares retry policies (postgres.Policy) for correct on
// PostgreSQL (IDEMLAB_PG; it skips otherwise) — postgres.Linear (at most
// 4 attempts, pauses of n × 1–5 ms), postgres.Jittered (at most 4, capped
// exponential pauses with full jitter) and postgres.UntilDeadline (those
// pauses for as long as the deadline leaves time; Retry's policy) — at
// each isolation level,
// with 1, 8 and 64 deliverers on a pool of at most 32 connections, for
// distinct events that all credit one hot account and for events spread
// over 1,000 accounts. Each delivery is given the receiver's deadline (10
// s), as an HTTP request's context would be. It reports events/s and, per
// 1,000 events, retries (attempts that failed with 40001 or 40P01 and were
// run again), busy (deliveries answered busy: the policy gave up) and
// errors (deliveries that failed otherwise). After the run every balance
// must be the sum of the inbox's amounts for it: nothing applied twice or
// half, whatever the policy.
func BenchmarkRetry(b *testing.B) {
	srv := labtest.NeedPostgres(b)
	admin, err := sql.Open("pgx", srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	schemas := 0
	for _, level := range lab.Isolations {
		slug := map[lab.Isolation]string{lab.ReadCommitted: "pg-rc", lab.RepeatableRead: "pg-rr", lab.Serializable: "pg-ser"}[level]
		for _, p := range []postgres.Policy{postgres.Linear, postgres.Jittered, postgres.UntilDeadline} {
			for _, accounts := range []int{1, 1000} {
				spread := map[int]string{1: "hot", 1000: "many"}[accounts]
				for _, deliverers := range []int{1, 8, 64} {
					b.Run(fmt.Sprintf("%s/%s/%s/deliverers=%d", slug, p.Name, spread, deliverers), func(b *testing.B) {
						schemas++
						schema := fmt.Sprintf("retry_%d_%d", time.Now().UnixNano()%1e6, schemas)
						benchRetry(b, admin, srv.URL(), schema, level, p, accounts, deliverers)
					})
				}
			}
		}
	}
}

func benchRetry(b *testing.B, admin *sql.DB, server, schema string, level lab.Isolation, p postgres.Policy, accounts, deliverers int) {
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	defer admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	u, err := url.Parse(server)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("synchronous_commit", "on") // the lab's database turns it off for its scenarios
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", postgres.DSN(u.String(), level))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(32)
	if _, err := db.Exec(correct.PostgresSchema + fmt.Sprintf(`
		INSERT INTO accounts (id) SELECT generate_series(1, %d);`, accounts)); err != nil {
		b.Fatal(err)
	}
	var retries, busy, failed atomic.Int64
	h := postgres.RetryWith(counting{correct.New(db), &retries}, p)
	warm(b, db, deliverers)
	var n atomic.Int64
	deliver := func() {
		i := n.Add(1)
		e := lab.Event{Source: "provider-a", EventID: fmt.Sprintf("evt-%d", i), AccountID: 1 + i%int64(accounts), Amount: 1}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := h.Process(ctx, e)
		switch {
		case err == nil:
		case errors.Is(lab.Classify(err), lab.ErrBusy):
			busy.Add(1)
		default:
			failed.Add(1)
			if failed.Load() == 1 {
				b.Logf("a delivery failed (rolled back): %v", err)
			}
		}
	}
	drive(b, deliverers, deliver)
	applied := b.N - int(busy.Load()+failed.Load())
	b.ReportMetric(float64(applied)/b.Elapsed().Seconds(), "applied/s")
	b.ReportMetric(float64(retries.Load())*1000/float64(b.N), "retries/1000")
	b.ReportMetric(float64(busy.Load())*1000/float64(b.N), "busy/1000")
	b.ReportMetric(float64(failed.Load())*1000/float64(b.N), "errors/1000")
	exactlyOnce(b, db, "inbox")
}
