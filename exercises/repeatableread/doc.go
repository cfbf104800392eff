// Package repeatableread is exercise 12 of EXERCISES.md, the starting
// point: a handler on MariaDB, at the server's default isolation level,
// REPEATABLE READ, that credits one event twice when two deliveries of it
// race.
//
// It checks "have we seen it?" and then writes the inbox row and the
// credit, all in one transaction, with INSERT … ON DUPLICATE KEY UPDATE
// for the row and mariadb.Retry around the delivery. On PostgreSQL the
// same code holds at REPEATABLE READ: the second writer fails with a
// serialization failure and the retry answers duplicate. On MariaDB it
// does not: the check reads the transaction's snapshot, the upsert counts
// 0 rows for the row the other delivery committed, and nothing looks at
// that count.
//
// Make it hold every MariaDB scenario at REPEATABLE READ:
//
//	eval "$(.ci/mariadb-start)"
//	go test ./checks -exercise=repeatableread
package repeatableread
