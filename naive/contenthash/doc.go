// Package contenthash recognises an event by a hash of what it does (account
// and amount) rather than by its id.
//
// The mistake is described under BUGS (go doc ./naive/contenthash).
//
// The fix: key the inbox on (source, event_id) and keep the content only to
// compare repeats with.
//
// It has no row in the PostgreSQL matrices yet: their LockTimeout holds
// the event's inbox row by inserting it as correct's schema stores it,
// which this schema (keyed on source and digest, digest NOT NULL) refuses,
// so that cell cannot be set up. On PostgreSQL it would make the same
// mistake with the same code.
//
// Compare: diff -u correct/process.go naive/contenthash/process.go
package contenthash

// BUG(lab): two genuine credits of the same amount to the same account have
// the same hash: the second is answered "duplicate" and never credited
// (article C21). Identity comes from the sender's event id, not from the
// content. Caught by DistinctEvents.
