// Package idonly treats every delivery of a known key as a duplicate.
//
// The mistake is described under BUGS (go doc ./naive/idonly).
//
// The fix: keep account and amount in the inbox and compare them on a
// conflict: the same payload is a duplicate, another one
// lab.ErrPayloadConflict.
//
// Compare: diff -u correct/process.go naive/idonly/process.go
package idonly

// BUG(lab): it never compares the stored account and amount with the
// delivery's. A provider that sends evt-1 with 500 and later evt-1 with 700
// has broken its contract, and that must be visible; idonly answers
// "duplicate" and hides it (claims C2, C6). Caught by PayloadConflict.
