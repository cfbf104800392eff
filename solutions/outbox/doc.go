// Package outbox is the reference solution of the outbox exercise. The
// handler writes the receipt into the outbox table in the credit's own
// transaction, so the e-mail exists exactly when the credit does. Relay
// sends what the outbox holds and marks it sent; it can die between the
// two and send again, so delivery is at least once — and the mailbox drops
// a message whose id it has seen, which makes it once.
package outbox
