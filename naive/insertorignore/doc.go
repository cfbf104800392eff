// Package insertorignore records the event with INSERT OR IGNORE instead of
// INSERT … ON CONFLICT (source, event_id) DO NOTHING.
//
// The mistake is described under BUGS (go doc ./naive/insertorignore).
//
// The fix: name the conflict you expect, ON CONFLICT (source, event_id) DO
// NOTHING, and let every other constraint fail loudly.
//
// On PostgreSQL the analogue of OR IGNORE is INSERT … ON CONFLICT DO
// NOTHING without a conflict target. It is not the same mistake there, and
// the variant has no row in the PostgreSQL matrices: PostgreSQL's ON
// CONFLICT handles only unique and exclusion constraint violations, with a
// target or without one, and a NOT NULL or CHECK violation fails the
// statement all the same (checked on PostgreSQL 15: even a row whose key
// conflicts is refused by a CHECK first). With the inbox's one unique
// constraint, the primary key, the untargeted form does exactly what
// correct's targeted one does, so the row would be correct's. (With a
// second unique constraint it would answer a conflict on that one as a
// duplicate, a mistake of its own.)
//
// Compare: diff -u correct/process.go naive/insertorignore/process.go
package insertorignore

// BUG(lab): OR IGNORE suppresses more than the key conflict: a NOT NULL or
// CHECK violation is ignored too, and the statement reports 0 rows, just
// like a repeat. (It does not reach every constraint: a FOREIGN KEY
// violation, 787, and a STRICT type error, 3091, are still raised.) A row
// the schema refuses on a NOT NULL or CHECK then looks like an event seen
// before (claim C8). Caught by DatabaseRefusal: the CHECK on the amount
// never reaches the handler, which then looks for a stored row that does not
// exist and fails with a confusing "no rows" instead of "invalid event".
