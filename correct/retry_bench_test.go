package correct_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/postgres"
	"idemlab/webhook"
)

// BenchmarkRetry compares retry policies (postgres.Policy) for correct on
// PostgreSQL (IDEMLAB_PG; it skips otherwise): postgres.Linear (at most 4
// attempts, pauses of n × 1–5 ms), postgres.Jittered (at most 4, capped
// exponential pauses with full jitter) and postgres.UntilDeadline (those
// pauses for as long as the deadline leaves time; Retry's policy). It runs
// each at every isolation level, with 1, 8 and 64 deliverers on a pool of
// at most 32 connections, for distinct events that all credit one hot
// account and for events spread over 1,000 accounts. Each delivery is
// given the receiver's deadline (webhook.DefaultDeadline), as an HTTP
// request's context would be. It reports events/s (answers of any kind),
// applied/s (events applied: what the sender need not send again) and,
// per 1,000 events, retries (attempts that failed with 40001 or 40P01 and
// were run again), busy (deliveries the policy gave up on) and errors
// (deliveries that failed otherwise). After each round every account's
// balance must be the sum of its inbox rows: nothing applied twice or
// half, whatever the policy.
func BenchmarkRetry(b *testing.B) {
	server, admin := pgAdmin(b)
	for _, level := range lab.Isolations {
		for _, p := range []postgres.Policy{postgres.Linear, postgres.Jittered, postgres.UntilDeadline} {
			for _, accounts := range []int{1, 1000} {
				spread := map[int]string{1: "hot", 1000: "many"}[accounts]
				for _, deliverers := range []int{1, 8, 64} {
					var m *pgMeasure
					b.Run(fmt.Sprintf("%s/%s/%s/deliverers=%d", levelSlug[level], p.Name, spread, deliverers), func(sub *testing.B) {
						if m == nil {
							m = newPGMeasure(sub, admin, server, level, accounts)
							h := postgres.RetryWith(counting{correct.New(m.db), &m.retries}, p)
							var n atomic.Int64
							m.deliver = func() error {
								i := n.Add(1)
								e := lab.Event{Source: "provider-a", EventID: fmt.Sprintf("evt-%d", i),
									AccountID: 1 + i%int64(accounts), Amount: 1}
								ctx, cancel := context.WithTimeout(context.Background(), webhook.DefaultDeadline)
								defer cancel()
								_, err := h.Process(ctx, e)
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
}
