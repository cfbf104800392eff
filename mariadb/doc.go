// Package mariadb holds what every handler of the kit needs to run on
// MariaDB (InnoDB) and that is never a lesson: the connection string with
// the handler's settings (DSN), the error type through which lab.Classify
// reads the server's error numbers (Wrap, Error), and the retry InnoDB
// prescribes for a transaction it rolled back because another ran beside
// it (Retry).
//
// The correct handler and the naive ones share it, so a variant's diff
// against correct/mariadb.go shows its mistake and nothing else.
//
// # The facts
//
// The package's tests also measure, on a real MariaDB server, each
// behaviour of MariaDB (InnoDB) that the kit's MariaDB lessons rest on,
// before any of them is taught (facts_test.go): what INSERT IGNORE does to
// a foreign-key, NOT NULL, CHECK or truncation failure; what a lock wait
// timeout (1205) and a deadlock (1213) roll back; gap locks and consistent
// reads at REPEATABLE READ; what SERIALIZABLE and innodb_snapshot_isolation
// change; how INSERT … ON DUPLICATE KEY UPDATE counts rows, with and
// without the driver's clientFoundRows; which of the correct handler's two
// candidate statements tells a duplicate from a refused row; and how a
// session waiting for a lock can be seen from another connection. Two
// facts the runs turned up beside those: the inbox row's foreign key
// share-locks the account, so two deliveries of different events for one
// account deadlock (TestForeignKeyLocksTheAccount), and under the server's
// default collation event ids that differ in case or trailing spaces are
// one key (TestKeyCollation).
//
// Each fact is established by a run: two sessions (connections) stepped by
// hand, one statement at a time, a session's wait for a lock seen in the
// server's own view of lock waits (information_schema.INNODB_TRX and
// INNODB_LOCK_WAITS), never assumed after a sleep. Beside each test, a
// comment cites MariaDB's documentation for the fact and says where the
// run disagrees with it; the run wins. docs/mariadb.md gives each fact,
// the command that reproduces it and what it means for a webhook handler.
//
// The facts, and TestDSNOnServer, need a server, named by the environment
// variable IDEMLAB_MARIADB as a DSN of github.com/go-sql-driver/mysql for a
// user that may create and drop databases and has the PROCESS privilege
// (for INNODB_TRX). Each fact creates a database of its own and drops it
// when it ends. Without the variable those tests skip, and the package
// prints one line saying how to run them. .ci/mariadb-start installs and
// starts a server of the lab's own and prints the line that sets the
// variable:
//
//	eval "$(.ci/mariadb-start)"
//	go test ./mariadb -v
//
// One fact needs a Galera cluster: TestGaleraCertification, what a
// delivery meets when another one commits the same event on another node.
// It runs when IDEMLAB_GALERA names two or more of the cluster's nodes, as
// space-separated DSNs; .ci/galera-start starts a three-node cluster on
// loopback and prints the line that sets it:
//
//	eval "$(.ci/galera-start)"
//	go test ./mariadb -run TestGalera -v
package mariadb
