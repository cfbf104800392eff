// Package contenthash recognises an event by a hash of what it does (account
// and amount) rather than by its id.
//
// The mistake is described under BUGS (go doc ./naive/contenthash).
//
// The fix: key the inbox on (source, event_id) and keep the content only to
// compare repeats with.
//
// On PostgreSQL it makes the same mistake with the same code, and the same
// schema in PostgreSQL's dialect (PostgresSchema, keyed on source and
// digest).
//
// Compare: diff -u correct/process.go naive/contenthash/process.go
package contenthash

// BUG(lab): two genuine credits of the same amount to the same account have
// the same hash: the second is answered "duplicate" and never credited
// (claim C21). Identity comes from the sender's event id, not from the
// content. Caught by DistinctEvents.
