// Package mariadb holds what every handler of the kit needs to run on
// MariaDB (InnoDB) and that is never a lesson: the connection string with
// the handler's settings (DSN), the error type through which lab.Classify
// reads the server's error numbers (Wrap, Error), and the retry InnoDB
// prescribes for a transaction it rolled back because another ran beside
// it (Retry).
//
// The correct handler and the naive ones share it, so a variant's diff
// against correct/mariadb.go shows its mistake and nothing else.
package mariadb
