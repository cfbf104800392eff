package postgres

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/lab"
)

// flaky fails its first n deliveries with a serialization failure, then
// applies; cancel, if set, is called at the first failure.
type flaky struct {
	n, calls int
	cancel   context.CancelFunc
}

func (f *flaky) Process(context.Context, lab.Event) (lab.Outcome, error) {
	f.calls++
	if f.calls <= f.n {
		if f.cancel != nil {
			f.cancel()
		}
		return 0, lab.Classify(&pgconn.PgError{Code: "40001"})
	}
	return lab.Applied, nil
}

// TestPolicies runs each policy against a serialization failure that
// clears after n attempts or never, in a synctest bubble (the pauses take
// no real time): the counted policies stop at their fourth attempt, the
// deadline's goes on while the deadline (or Budget) leaves time, and every
// answer that is not applied is busy and keeps the 40001.
func TestPolicies(t *testing.T) {
	for _, c := range []struct {
		p        Policy
		deadline time.Duration
		n        int
		calls    int // 0: at least 10
		want     string
	}{
		{Linear, 0, 3, 4, ""},
		{Linear, 0, 4, 4, "busy"},
		{Jittered, 0, 4, 4, "busy"},
		{UntilDeadline, 0, 30, 31, ""},
		{UntilDeadline, 0, 1 << 30, 0, "busy"},
		{UntilDeadline, 2 * time.Second, 1 << 30, 0, "busy"},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx, limit := context.Background(), Budget
			if c.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.deadline)
				defer cancel()
				limit = c.deadline
			}
			f := &flaky{n: c.n}
			start := time.Now()
			o, err := RetryWith(f, c.p).Process(ctx, lab.Event{})
			took := time.Since(start)
			callsOK := f.calls == c.calls || c.calls == 0 && f.calls >= 10
			if got := lab.ErrorKind(err); got != c.want || !callsOK || took > limit || err != nil && !lab.Retryable(err) {
				t.Errorf("RetryWith(fails %d×, %s, deadline %v).Process = %v, %v after %d calls in %v, want %q after %d calls (0: 10 or more) within %v, the 40001 kept",
					c.n, c.p.Name, c.deadline, o, err, f.calls, took, c.want, c.calls, limit)
			}
		})
	}
}

// TestRetryHonoursTheContext: a caller that gives up during a pause gets
// busy at once, wrapping its context's error and the last 40001.
func TestRetryHonoursTheContext(t *testing.T) {
	for _, p := range []Policy{Linear, Jittered, UntilDeadline} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &flaky{n: 1 << 30, cancel: cancel}
			_, err := RetryWith(f, p).Process(ctx, lab.Event{})
			if !errors.Is(err, lab.ErrBusy) || !errors.Is(err, context.Canceled) || !lab.Retryable(err) || f.calls != 1 {
				t.Errorf("RetryWith(%s).Process, cancelled at the first failure = %v after %d calls, want busy, context.Canceled and the 40001 after 1",
					p.Name, err, f.calls)
			}
		})
	}
}

// TestFullJitter: every pause lies in [0, min(MaxPause, FirstPause·2ⁿ⁻¹)).
func TestFullJitter(t *testing.T) {
	for n := 1; n <= 70; n++ {
		limit := min(MaxPause, FirstPause<<min(n-1, 20))
		for range 200 {
			if d := FullJitter(n); d < 0 || d >= limit {
				t.Fatalf("FullJitter(%d) = %v, want in [0, %v)", n, d, limit)
			}
		}
	}
}
