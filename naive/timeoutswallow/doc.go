// Package timeoutswallow is the correct handler on MariaDB, except for what
// it makes of a lock wait timeout (1205) on its inbox INSERT: it logs it and
// carries on, reasoning that InnoDB rolled back only the statement and the
// transaction is still usable. That much is true (innodb_rollback_on_timeout
// is off by default); carrying on is the mistake. The handler goes on to
// credit the account and COMMITs: half a delivery, the credit without its
// inbox row, answered "applied" while another delivery of the key is in
// flight, and credited again by the sender's retry.
//
// It has no row on SQLite, whose busy timeout fails the statement before it
// holds anything, nor on PostgreSQL, where an error aborts the transaction
// and its COMMIT rolls back.
//
// Compare: diff -u correct/mariadb.go naive/timeoutswallow/mariadb.go
package timeoutswallow

// BUG(lab): a lock wait timeout (1205) on the inbox INSERT is swallowed,
// and the delivery commits its credit without its inbox row: "applied"
// while the key is in flight elsewhere, and the redelivery credits it
// again. 1205 is "busy, retry later", and must end in ROLLBACK. Caught by
// ConflictLockTimeout at every level. LockTimeout does not catch it: there
// the held row is for the same account, whose foreign key lock makes the
// credit time out too, and the handler answers busy.
