package serialasduplicate

import (
	"context"
	"time"

	"idemlab/lab"
	"idemlab/postgres"
)

// Retry returns h with the retry PostgreSQL prescribes for serialization
// failures (40001) and deadlocks (40P01): such a transaction was rolled
// back whole, only because another one ran beside it, so the delivery is
// run again from BEGIN, after a pause that FullJitter draws, for as long
// as the caller's deadline leaves time (UntilDeadline). When it gives up,
// the last error is the answer: busy (lab.ErrBusy), never duplicate. For
// correct's handler, whose transaction writes one inbox row and one
// account, no serialization failure arises at READ COMMITTED (a deadlock,
// 40P01, could arise there for transactions that lock rows in different
// orders; this one cannot), and none on SQLite, so there Retry changes
// nothing.
func Retry(h lab.Processor) lab.Processor { return RetryWith(h, postgres.UntilDeadline) }

// RetryWith is Retry with the policy p.
func RetryWith(h lab.Processor, p postgres.Policy) lab.Processor { return retrying{h, p} }

type retrying struct {
	h lab.Processor
	p postgres.Policy
}

// Process runs the delivery, again after a retryable failure.
func (r retrying) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		o, err := r.h.Process(ctx, e)
		if lab.Retryable(err) {
			return lab.Duplicate, nil // "someone else got there first"
		}
		if err == nil || !lab.Retryable(err) {
			return o, err
		}
		if err := r.p.Wait(ctx, attempt, start, err); err != nil {
			return 0, err
		}
	}
}
