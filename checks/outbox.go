package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"idemlab/exercises/outbox"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// outboxHandler is s's handler as the lab sees one, its e-mail dropped, so
// that the whole matrix runs on it.
//
// The matrix's property test runs thousands of stories on one database,
// emptying the inbox and restoring the balances before each (labtest's
// DB.Reset), and it knows nothing of an outbox. So that a receipt queued
// in one story does not collide with the same event's in the next, the
// outbox forgets what the inbox forgets: a trigger, added here when the
// schema has an outbox table, is all the matrix adds to it.
func outboxHandler(s outbox.Service) lab.Variant {
	v := s.Variant(discard{})
	if strings.Contains(strings.ToLower(v.Schema), "create table outbox") {
		v.Schema += `;
CREATE TRIGGER lab_reset_outbox AFTER DELETE ON inbox BEGIN
	DELETE FROM outbox WHERE id = OLD.source || '/' || OLD.event_id;
END;`
	}
	return v
}

// discard is a mailer that drops every message.
type discard struct{}

func (discard) Send(context.Context, outbox.Message) error { return nil }

var (
	// errAckLost is the error of a send whose acknowledgement was lost:
	// the message was delivered.
	errAckLost = errors.New("connection reset after the message was sent")
	// errRefused is the error of a mail server that refuses a message for
	// now: it was not delivered.
	errRefused = errors.New("421 service not available, try again later")
)

// postman delivers messages to a mailbox. The next send after loseAck is
// set is delivered but reported as failed; the next after refuse is set is
// not delivered at all.
type postman struct {
	to      outbox.Mailbox
	loseAck bool
	refuse  bool
	failed  int // sends reported as failed so far
}

func (p *postman) Send(_ context.Context, m outbox.Message) error {
	if p.refuse {
		p.refuse = false
		p.failed++
		return errRefused
	}
	p.to.Receive(m)
	if p.loseAck {
		p.loseAck = false
		p.failed++
		return errAckLost
	}
	return nil
}

// Outbox is the check of the outbox exercise: OneReceiptPerCredit, then
// the whole matrix held to the correct standard.
func Outbox(c *Checker, s outbox.Service) {
	mail := &postman{}
	c.Scenario(oneReceiptPerCredit(s, mail), s.Variant(mail))
	c.Matrix(outboxHandler(s), nil)
}

// oneReceiptPerCredit tells five stories, the relay running twice (as a job
// would) after each, and then counts the receipts in the mailbox: exactly
// one per credit, none for an event that was never credited.
//
//   - evt-1: its COMMIT fails; the provider retries, and it is credited.
//   - evt-2: the mail server delivers its receipt but the acknowledgement
//     is lost, so the sender thinks it failed.
//   - evt-3: its COMMIT fails and the provider never retries: no credit,
//     so no receipt.
//   - evt-4: the mail server refuses its receipt once, then accepts.
//   - evt-5: the answer is lost after its COMMIT; the provider retries and
//     is told duplicate.
func oneReceiptPerCredit(s outbox.Service, mail *postman) labtest.Scenario {
	return labtest.Scenario{
		Name:  "OneReceiptPerCredit",
		Shows: "a COMMIT that fails (retried, or never), a lost acknowledgement, a refusing mail server, a lost answer: one receipt per credit",
		Run: func(r *labtest.Run) {
			ctx := context.Background()
			mailbox := s.Receiver()
			mail.to = mailbox
			db := r.Open()
			relay := func() {
				for range 2 {
					failed := mail.failed
					if err := s.Relay(ctx, db.Pool(), mail); err != nil && mail.failed == failed {
						r.Errorf("Relay: %v", err)
					}
				}
			}
			event := func(id string) lab.Event {
				return lab.Event{Source: "provider-a", EventID: id, AccountID: 1, Amount: 100}
			}
			// deliver delivers e as a provider does: again after an error,
			// up to three times.
			deliver := func(e lab.Event) {
				for range 3 {
					if a := db.Attempt(e); a.Err == nil {
						return
					}
				}
				r.Errorf("Process(%v) failed three times", e)
			}

			db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpCommit})
			deliver(event("evt-1"))
			db.Lift()
			relay()

			mail.loseAck = true
			deliver(event("evt-2"))
			relay()

			db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpCommit})
			db.Attempt(event("evt-3")) // fails, and is never retried
			db.Lift()
			relay()

			deliver(event("evt-4"))
			mail.refuse = true
			relay()
			relay()

			db.Inject(labtest.Fault{When: labtest.After, Op: labtest.OpCommit})
			deliver(event("evt-5"))
			db.Lift()
			relay()

			count := map[string]int{}
			for _, m := range mailbox.Messages() {
				count[m.ID]++
			}
			for i, want := range []int{1, 1, 0, 1, 1} {
				id := event(fmt.Sprintf("evt-%d", i+1)).Key().String()
				if got := count[id]; got != want {
					r.Errorf("receipts for %s in the mailbox = %d, want %d", id, got, want)
				}
			}
			r.WantBalance(db, 1, 400)
		},
	}
}
