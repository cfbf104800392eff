// Package wal is package correct in SQLite's write-ahead-log mode
// (journal_mode=WAL in the DSN) instead of the rollback journal.
//
// It is equivalent because the journal mode changes how a transaction
// reaches the disk, not what it writes: BEGIN IMMEDIATE still takes the
// one write lock before the INSERT reads, so two deliveries still queue,
// and with synchronous=FULL (the default) a committed transaction survives
// a crash. What differs is visible only in timing: readers never wait for
// the writer, and a COMMIT does not wait for readers to finish, so a
// scenario that expects busy where WAL lets the COMMIT through must accept
// both.
//
// Compare: diff -u correct/schema.go equivalent/wal/schema.go
package wal
