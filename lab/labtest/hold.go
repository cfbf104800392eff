package labtest

import "database/sql"

// Locks held by another process: a write lock, a read lock, on a
// connection of the lab's own.

// HoldWriteLock takes the database's write lock on a connection of its own,
// as another process would, and returns the function that releases it.
func (db *DB) HoldWriteLock() (release func()) {
	db.run.tb.Helper()
	_, release = db.hold("HoldWriteLock", []string{"BEGIN IMMEDIATE"}, "BEGIN IMMEDIATE", "the write lock")
	return release
}

// hold runs statements, which open a transaction, on a connection of the
// lab's pool, as another process would, notes them in the transcript as
// shown, holding what, and returns the connection and the function that
// rolls the transaction back. HoldWriteLock, HoldReadLock and
// Delivery.WhileLocked are its uses.
func (db *DB) hold(caller string, statements []string, shown, what string) (c *sql.Conn, release func()) {
	db.run.tb.Helper()
	ctx := db.labCtx
	c, err := db.own.Conn(ctx)
	if err != nil {
		db.run.tb.Fatalf("%s: %v", caller, err)
	}
	for _, st := range statements {
		if _, err := c.ExecContext(ctx, st); err != nil {
			db.run.tb.Fatalf("%s: %s: %v", caller, st, err)
		}
	}
	db.run.Transcript.Note("other", shown, "holds "+what)
	return c, func() {
		if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
			db.run.tb.Fatalf("%s release: %v", caller, err)
		}
		c.Close()
		db.run.Transcript.Note("other", "ROLLBACK", "releases "+what)
	}
}

// HoldReadLock opens a read transaction on a connection of its own, as a
// reporting query in another process would, and returns the function that
// ends it. In rollback-journal mode its SHARED lock lets a writer start but
// not commit: the writer's COMMIT waits for it, up to the busy timeout.
func (db *DB) HoldReadLock() (release func()) {
	db.run.tb.Helper()
	read := "SELECT count(*) FROM accounts"
	_, release = db.hold("HoldReadLock", []string{"BEGIN DEFERRED", read}, "BEGIN; "+read, "a read lock")
	return release
}
