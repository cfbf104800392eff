package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"idemlab/lab"
)

// Policy is when Retry runs a delivery again after a retryable failure:
// how long it pauses after each failed attempt, and when it stops and
// answers busy. Whatever the policy, a pause ends early when the caller's
// context does, and the answer is then busy.
type Policy struct {
	// Name names the policy in benchmarks and in the docs.
	Name string
	// Attempts bounds the runs of one delivery. 0 bounds them by time
	// instead: by the context's deadline, or by Budget from the first
	// attempt when the context has none.
	Attempts int
	// Pause is the pause after the n-th failed attempt (n ≥ 1).
	Pause func(n int) time.Duration
}

// The policies BenchmarkRetry (correct/retry_bench_test.go) compares on
// PostgreSQL; Retry follows UntilDeadline, for the reasons
// docs/performance.md gives with the measurements, and mariadb.Retry
// Linear, which was not measured against the others on MariaDB.
var (
	// UntilDeadline pauses as FullJitter draws, for as many attempts as
	// the caller's deadline leaves time for: it stops when the next
	// pause would end after the deadline (after Budget, without one).
	UntilDeadline = Policy{Name: "deadline", Pause: FullJitter}
	// Jittered makes at most 4 attempts, pausing as FullJitter draws.
	Jittered = Policy{Name: "jitter4", Attempts: 4, Pause: FullJitter}
	// Linear makes at most 4 attempts, pausing n × 1–5 ms (a whole
	// number of milliseconds drawn at random) after the n-th.
	Linear = Policy{Name: "linear4", Attempts: 4, Pause: linearPause}
)

// Bounds of FullJitter and of a time-bounded Policy.
const (
	// FirstPause is the longest pause after the first failed attempt.
	FirstPause = 2 * time.Millisecond
	// MaxPause caps every pause.
	MaxPause = 100 * time.Millisecond
	// Budget bounds a time-bounded policy's attempts when the context
	// has no deadline: the time the webhook receiver gives a delivery
	// (webhook.DefaultDeadline).
	Budget = 10 * time.Second
)

func linearPause(n int) time.Duration {
	return time.Duration(n) * time.Millisecond * time.Duration(1+rand.IntN(5))
}

// FullJitter is a pause drawn uniformly from [0, min(MaxPause,
// FirstPause·2ⁿ⁻¹)) after the n-th failed attempt: a capped exponential
// backoff with "full jitter". Exponential, so that deliveries that keep
// colliding spread out; capped, so that none sleeps long for nothing;
// drawn from zero up, so that the deliveries that failed together do not
// come back together.
func FullJitter(n int) time.Duration {
	limit := MaxPause
	if n <= 16 && FirstPause<<(n-1) < MaxPause {
		limit = FirstPause << (n - 1)
	}
	return rand.N(limit)
}

// Wait follows the n-th failed attempt of a delivery that began at start
// and failed retryably with err. It returns nil after the pause, when the
// delivery is to run again; err itself when the policy allows no further
// attempt; and, when the context ends during the pause, busy wrapping the
// context's error and err.
func (p Policy) Wait(ctx context.Context, n int, start time.Time, err error) error {
	if p.Attempts > 0 && n >= p.Attempts {
		return err
	}
	pause := p.Pause(n)
	if p.Attempts == 0 {
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = start.Add(Budget)
		}
		if time.Now().Add(pause).After(deadline) {
			return err
		}
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return lab.Classify(fmt.Errorf("%w (after %d attempts, the last: %w)", ctx.Err(), n, err))
	case <-t.C:
		return nil
	}
}
