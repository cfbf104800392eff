package serialasduplicate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"idemlab/lab"
)

// Attempts is how many times Retry runs a delivery whose transaction
// PostgreSQL rolled back for a serialization failure or a deadlock.
const Attempts = 4

// Retry returns h with the retry PostgreSQL prescribes for serialization
// failures (40001) and deadlocks (40P01): such a transaction was rolled
// back whole, only because another one ran beside it, so the delivery is
// run again from BEGIN — at most Attempts times, after a short random
// pause that grows with each attempt, so that two retrying deliveries do
// not collide again in step. If every attempt fails, the last error is
// the answer: busy (lab.ErrBusy), never duplicate. For correct's handler,
// whose transaction writes one inbox row and one account, no serialization
// failure arises at READ COMMITTED (a deadlock, 40P01, could arise there for
// transactions that lock rows in different orders; this one cannot), and
// none on SQLite, so there Retry changes nothing.
func Retry(h lab.Processor) lab.Processor { return retrying{h} }

type retrying struct{ h lab.Processor }

// Process runs the delivery, again after a retryable failure.
func (r retrying) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	for attempt := 1; ; attempt++ {
		o, err := r.h.Process(ctx, e)
		if lab.Retryable(err) {
			return lab.Duplicate, nil // "someone else got there first"
		}
		if err == nil || !lab.Retryable(err) || attempt == Attempts {
			return o, err
		}
		pause := time.Duration(attempt) * time.Millisecond * time.Duration(1+rand.IntN(5))
		select {
		case <-ctx.Done():
			return 0, lab.Classify(fmt.Errorf("%w (after %d attempts, the last: %w)", ctx.Err(), attempt, err))
		case <-time.After(pause):
		}
	}
}
