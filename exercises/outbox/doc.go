// Package outbox is the starting point of an exercise (EXERCISES.md): a
// side effect outside the database — an e-mail — must happen once per
// credit, although no transaction can include it.
//
// The handler e-mails a receipt from inside its transaction. When the
// COMMIT then fails, the credit is rolled back but the e-mail is already
// out, and the retry sends a second one. The fix has three parts: record
// the e-mail in an outbox table in the credit's transaction; let a relay
// send what the outbox holds (and mark it sent); and since the relay can
// die between sending and marking, let the receiver drop a message it has
// seen. Change this package until the check passes:
//
//	go test ./checks -exercise=outbox
package outbox
