// Package checkthenact asks "have we seen this event?" with a SELECT, and if
// not, credits the account and records the event, each statement committing
// on its own. It is the first thing most people write.
//
// The mistake is described under BUGS (go doc ./naive/checkthenact).
//
// The fix is the correct variant: let the key decide inside the transaction
// that also makes the credit (INSERT … ON CONFLICT DO NOTHING first, then the
// UPDATE, one BEGIN IMMEDIATE transaction).
//
// Compare: diff -u correct/process.go naive/checkthenact/process.go
package checkthenact

// BUG(lab): check-then-act without a transaction. Two deliveries of the same
// event can both read "not seen" before either writes, and then both credit.
// The inbox's primary key makes the second INSERT fail (UNIQUE constraint
// failed, 1555), but too late: the second credit is already committed and
// nothing undoes it (claim C3). A crash between the UPDATE and the INSERT
// leaves a credit with no record of it, so the redelivery credits again.
// Caught by Race and Concurrent.
