// Package insertorreplace records the event with INSERT OR REPLACE.
//
// The mistake is described under BUGS (go doc ./naive/insertorreplace).
//
// The fix: the inbox is a memory of the first accepted event; keep it with ON
// CONFLICT … DO NOTHING and compare, as the correct variant does.
//
// On PostgreSQL, which has no OR REPLACE, the analogue is INSERT … ON
// CONFLICT (source, event_id) DO UPDATE SET account_id = excluded.account_id,
// amount = excluded.amount: the same mistake (PostgresHandler; compare its
// Process with Handler's). Caught there by Duplicate and PayloadConflict at
// every isolation level.
//
// Compare: diff -u correct/process.go naive/insertorreplace/process.go
package insertorreplace

// BUG(lab): on a key conflict REPLACE deletes the stored row and inserts the
// new one, and the statement still reports 1 row changed. Every repeat looks
// new: it is credited again, and a repeat with another amount silently
// overwrites the memory of the first event (claim C9). Caught by Duplicate
// and PayloadConflict.
