package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"idemlab/lab"
)

// Message is an e-mail.
type Message struct {
	ID   string // unique per credit: see Receipt
	Body string
}

// Receipt is the e-mail for the credit of e. Its id is e's source and
// event id joined by a '/', each with its '%' and '/' escaped (%25, %2F):
// written plainly, acme/eu's event x and acme's event eu/x would both be
// acme/eu/x, one id for two credits, and a mailbox that drops an id it has
// seen would keep only one of their receipts.
func Receipt(e lab.Event) Message {
	return Message{ID: idEscaper.Replace(e.Source) + "/" + idEscaper.Replace(e.EventID),
		Body: fmt.Sprintf("account %d was credited %d", e.AccountID, e.Amount)}
}

// idEscaper escapes the two characters that would let one id name two
// events: '/', which ends the source, and '%', which begins an escape.
var idEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

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
