package scenarios

import (
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// The limits of the pattern (claims C18–C22): guarantees an inbox keyed by
// event id cannot give, whoever implements it: one operation under two ids,
// a history that was purged, an effect outside the database. The correct variant fails
// them by design; the matrix marks their columns with a *, and the
// exercises that lift them say how.

// BusinessKey: the provider reports one payment twice, as evt-1 and as
// evt-2 (say, once from each of two webhooks). Both events are new to the
// inbox, so both credit — unless the handler knows a key for the
// operation itself, which the event alone does not carry.
func BusinessKey(r *labtest.Run) {
	db := r.Open()
	r.WantOutcome(db.Deliver(credit("evt-1", 500)), lab.Applied)
	db.Deliver(credit("evt-2", 500)) // the same payment, under another id
	r.WantBalance(db, 1, 500)
	r.Notef("one payment under two ids credited once")
}

// Retention: the inbox history is purged to keep it small, and then the
// provider redelivers an event it never got an answer for. The inbox has
// forgotten it, so it credits again — unless the purge keeps every row the
// provider may still redeliver.
func Retention(r *labtest.Run) {
	db := r.Open()
	e := credit("evt-1", 500)
	r.WantOutcome(db.Deliver(e), lab.Applied)
	db.PurgeInbox()
	r.WantOutcome(db.Deliver(e), lab.Duplicate)
	r.WantBalance(db, 1, 500)
	r.Notef("a redelivery after the purge was still a duplicate")
}

// SideEffect: the code around the handler e-mails a receipt when the
// handler answers "applied" — the usual place for it, outside the
// transaction. The delivery's last statement (its COMMIT, for most
// variants) succeeds but the answer is lost, so no e-mail goes out; the
// provider retries and is told "duplicate", so none goes out then either.
// Exactly one e-mail per credit needs the e-mail recorded in the credit's
// own transaction: an outbox.
func SideEffect(r *labtest.Run) {
	e := credit("evt-1", 500)
	// A first database only counts the statements of a clean delivery, to
	// find the last one whatever the variant.
	probe := r.Open()
	last := probe.Steps(probe.Deliver(e).Session)

	db := r.Open()
	mails := 0
	send := func(a labtest.Answer) {
		if a.Err == nil && a.Outcome == lab.Applied {
			mails++
		}
	}
	db.Inject(labtest.Fault{When: labtest.After, N: last})
	send(db.Deliver(e, labtest.Delivery{Unchecked: true}))
	db.Lift()
	send(db.Deliver(e))
	r.WantBalance(db, 1, 500)
	if mails != 1 {
		r.Errorf("receipts e-mailed for %v = %d, want 1: the answer that triggers the e-mail was lost after COMMIT", e, mails)
	}
	r.Notef("one credit, one e-mail")
}
