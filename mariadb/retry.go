package mariadb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"idemlab/lab"
)

// Attempts is how many times Retry runs a delivery whose transaction
// InnoDB rolled back for a deadlock or a changed record.
const Attempts = 4

// Retry returns h with the retry InnoDB prescribes for a deadlock (1213)
// and, with innodb_snapshot_isolation, a record changed since it was read
// (1020): the whole transaction was rolled back, only because another ran
// beside it, so the delivery is run again from BEGIN — at most Attempts
// times, after a short random pause that grows with each attempt. If every
// attempt fails, the last error is the answer: busy (lab.ErrBusy), never
// duplicate. A lock wait timeout (1205) is not retried: it rolled back
// only its statement, and the handler's answer, busy, leaves the retry to
// the sender.
//
// On MariaDB the correct handler needs it even for events no one else
// delivers: the inbox row's foreign key share-locks the account, so two
// deliveries of different events for one account, each INSERTing and then
// UPDATEing the account, deadlock, and InnoDB rolls one back.
func Retry(h lab.Processor) lab.Processor { return retrying{h} }

type retrying struct{ h lab.Processor }

// Process runs the delivery, again after a retryable failure.
func (r retrying) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	for attempt := 1; ; attempt++ {
		o, err := r.h.Process(ctx, e)
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
