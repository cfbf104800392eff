package checks

import (
	"context"
	"database/sql"
	"testing"

	"pgregory.net/rapid"

	"idemlab/exercises/outbox"
	"idemlab/lab"
	outboxsolution "idemlab/solutions/outbox"
)

// TestDrainSendsWhatWaits holds MailSearch's end of story to a relay that
// sends one message a run, oldest first: two messages whose
// acknowledgements were lost wait unsent, in the mailbox already, before a
// third that never left. Their runs send nothing the mailbox lacks; the
// runs after them must still come, until every credit's receipt is in.
func TestDrainSendsWhatWaits(t *testing.T) {
	events := []lab.Event{
		{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 100},
		{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 200},
		{Source: "provider-a", EventID: "evt-3", AccountID: 1, Amount: 300},
	}
	rapid.Check(t, func(rt *rapid.T) {
		mailbox := outboxsolution.Service.Receiver()
		var queue []outbox.Message // what the outbox holds unsent, oldest first
		stored := map[lab.Key]lab.Event{}
		for i, e := range events {
			stored[e.Key()] = e
			m := outboxsolution.Receipt(e)
			queue = append(queue, m)
			if i < 2 {
				mailbox.Receive(m) // sent, its acknowledgement lost: still unsent in the outbox
			}
		}
		one := func(ctx context.Context, _ *sql.DB, mailer outbox.Mailer) error {
			if len(queue) == 0 {
				return nil
			}
			if err := mailer.Send(ctx, queue[0]); err != nil {
				return err
			}
			queue = queue[1:]
			return nil
		}
		mj := &mailJobs{post: &storyPostman{}, relay: one, receipt: outboxsolution.Receipt}
		mj.post.reset(mailbox)
		lm := &ledgerMachine{env: &ledgerEnv{}, story: &story{}, m: &ledgerModel{stored: stored}}
		mj.drain(lm, rt)
		if n := mj.missing(lm); n != 0 {
			t.Errorf("after drain, credits without their receipt = %d, want 0", n)
		}
	})
}
