package outbox

import (
	"context"
	"database/sql"
	"fmt"

	"idemlab/lab"
)

// Message is an e-mail.
type Message struct {
	ID   string // unique per credit: source/event_id
	Body string
}

// Receipt is the e-mail for the credit of e.
func Receipt(e lab.Event) Message {
	return Message{ID: e.Key().String(), Body: fmt.Sprintf("account %d was credited %d", e.AccountID, e.Amount)}
}

// Mailer sends e-mail. Send may fail after the message went out (the
// acknowledgement was lost): the sender cannot tell.
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// Relay sends the e-mails waiting in the outbox. A job runs it every few
// seconds.
func Relay(ctx context.Context, db *sql.DB, mailer Mailer) error {
	return nil // nothing waits: the handler sends its e-mails itself
}

// Receiver is the other end of the mail: the customer's mailbox.
type Receiver struct {
	Got []Message
}

// Receive takes a message in.
func (r *Receiver) Receive(m Message) {
	r.Got = append(r.Got, m)
}
