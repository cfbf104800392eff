package outbox

import (
	"context"
	"database/sql"

	"idemlab/lab"
)

// Service is one implementation of the exercise: the handler (as a lab
// variant, so that the check can make its COMMIT fail), the relay, the
// receiving end, and the receipt a credit e-mails, which the check expects
// in the mailbox once per credit.
type Service struct {
	Variant  func(m Mailer) lab.Variant
	Relay    func(ctx context.Context, db *sql.DB, m Mailer) error
	Receiver func() Mailbox
	Receipt  func(e lab.Event) Message
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
	Receipt:  Receipt,
}
