package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// Service is one implementation of the exercise: the handler (as a lab
// variant, so that the check can make its COMMIT fail), the relay, and the
// receiving end.
type Service struct {
	Variant  func(m Mailer) lab.Variant
	Relay    func(ctx context.Context, db *sql.DB, m Mailer) error
	Receiver func() Mailbox
}

// Mailbox is the receiving end of the mail.
type Mailbox interface {
	Receive(m Message)
	Messages() []Message
}

// Messages returns what the mailbox holds.
func (r *Receiver) Messages() []Message { return r.Got }

// Starting is this package, the exercise's starting point.
var Starting = Service{
	Variant: func(m Mailer) lab.Variant {
		return lab.Variant{Name: "exercises/outbox", Mistake: "the exercise's starting point", Schema: Schema, DSN: DSN,
			New: func(db *sql.DB) lab.Processor { return New(db, m) }}
	},
	Relay:    Relay,
	Receiver: func() Mailbox { return &Receiver{} },
}

// errAckLost is the error of a send whose acknowledgement was lost.
var errAckLost = errors.New("connection reset after the message was sent")

// postman delivers every message to the receiver; while loseAck is set, it
// reports a failure after delivering.
type postman struct {
	to      Mailbox
	loseAck bool
}

func (p *postman) Send(_ context.Context, m Message) error {
	p.to.Receive(m)
	if p.loseAck {
		p.loseAck = false
		return errAckLost
	}
	return nil
}

// Check is the exercise's check. evt-1's first delivery fails at COMMIT and
// is retried; evt-2's e-mail is sent but its acknowledgement is lost. After
// the relay has run (twice, as a job would), the mailbox must hold exactly
// one receipt per credit.
func Check(t *testing.T, s Service) []string {
	ctx := context.Background()
	mailbox := s.Receiver()
	mail := &postman{to: mailbox}
	r := labtest.NewRun(t, s.Variant(mail))
	db := r.Open()
	var failures []string
	fail := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }
	relay := func() {
		for range 2 {
			if err := s.Relay(ctx, db.Pool(), mail); err != nil && !errors.Is(err, errAckLost) {
				fail("Relay: %v", err)
			}
		}
	}

	evt1 := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpCommit})
	db.Deliver(evt1) // fails at COMMIT: rolled back
	db.Lift()
	if a := db.Deliver(evt1); a.Err != nil || a.Outcome != lab.Applied {
		fail("the retry of evt-1 = %v, want applied", a)
	}
	relay()

	evt2 := lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 300}
	mail.loseAck = true
	if a := db.Deliver(evt2); a.Err != nil {
		if a = db.Deliver(evt2); a.Err != nil || a.Outcome != lab.Applied {
			fail("the retry of evt-2 = %v, want applied", a)
		}
	}
	relay()
	r.Close()
	failures = append(failures, r.Failures()...)

	count := map[string]int{}
	for _, m := range mailbox.Messages() {
		count[m.ID]++
	}
	for _, id := range []string{"provider-a/evt-1", "provider-a/evt-2"} {
		if count[id] != 1 {
			fail("receipts for %s in the mailbox = %d, want 1", id, count[id])
		}
	}
	return failures
}
