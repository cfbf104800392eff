// Package correct is the handler that applies each event at most once, the
// way the article recommends: the inbox row that remembers the event and the
// credit it causes are written in one transaction, so they are committed
// together or not at all.
//
// One delivery is one BEGIN IMMEDIATE transaction:
//
//  1. INSERT the event into the inbox with ON CONFLICT (source, event_id)
//     DO NOTHING. The primary key decides, inside the transaction, whether
//     this event was seen before.
//  2. If a row was inserted, credit the account and answer applied.
//  3. If not, read the stored account and amount: the same payload is a
//     duplicate, another payload a contract error (lab.ErrPayloadConflict).
//  4. COMMIT. Any error before it rolls everything back and is returned.
//
// BEGIN IMMEDIATE takes the write lock at the start, so two deliveries never
// both read "not seen yet": the second waits (busy_timeout) and then finds
// the row. A wait that outlasts the timeout is lab.ErrBusy, which says
// nothing about the event: retry later.
//
// SQLite has one writer. Give the handler a pool of one connection
// (db.SetMaxOpenConns(1)): deliveries then queue in database/sql, in order,
// and a burst costs time, not errors. With a connection per goroutine the
// writers poll SQLite's lock instead, and under a long burst the unlucky
// ones outwait busy_timeout and answer busy (TestBurst measures both). The
// handler needs only one connection at a time, so one is enough.
//
// The naive variants in ../naive are this package with one mistake each.
// Compare, for example:
//
//	diff -u correct/process.go naive/markfirst/process.go
package correct
