// Package sourceless identifies events by event_id alone.
//
// The mistake is described under BUGS (go doc ./naive/sourceless).
//
// The fix: PRIMARY KEY (source, event_id), and ON CONFLICT on both columns.
//
// On PostgreSQL it makes the same mistake with the same code and the same
// schema in PostgreSQL's dialect (PostgresSchema keys on event_id alone).
// Caught there by SourceScope at every isolation level.
//
// Compare: diff -u correct/schema.go naive/sourceless/schema.go
package sourceless

// BUG(lab): an event id is unique only within the provider that issued it.
// evt-1 from provider-b is a different event from evt-1 from provider-a, but
// sourceless takes it for a repeat and drops the credit (claim C5).
// Caught by SourceScope.
