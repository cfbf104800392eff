package mariadb

import (
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"idemlab/lab"
)

// LockWaitTimeout is the handler's innodb_lock_wait_timeout, in seconds
// (the server takes whole seconds only): how long a statement waits for a
// row another delivery holds before it fails with 1205, busy.
const LockWaitTimeout = 2

// StatementTimeout is the handler's max_statement_time, in seconds: no
// statement runs longer.
const StatementTimeout = 5

// DSN returns the connection string for the database at server (a
// go-sql-driver/mysql DSN), with the handler's settings, which the driver
// applies to every connection it opens:
//
//   - tx_isolation: the level every transaction gets, as MariaDB spells it
//     (READ-COMMITTED, REPEATABLE-READ, SERIALIZABLE). 10.11 names the
//     variable tx_isolation; transaction_isolation is 11.1's name;
//   - innodb_lock_wait_timeout = LockWaitTimeout and max_statement_time =
//     StatementTimeout: the timeouts are the server's, because the driver
//     answers a cancelled context by closing the connection;
//   - parseTime: DATETIME columns scan into time.Time;
//   - interpolateParams: arguments are sent in the statement's text, one
//     round trip per statement, and the statement the server shows is the
//     one that ran;
//   - never clientFoundRows: with it, INSERT … ON DUPLICATE KEY UPDATE
//     counts a duplicate as 1 row, the count of a new one, and the
//     duplicate is credited again. DSN turns it off even when server asks
//     for it.
func DSN(server string, level lab.Isolation) string {
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		return server // the driver reports the malformed string itself
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["tx_isolation"] = "'" + Level(level) + "'"
	cfg.Params["innodb_lock_wait_timeout"] = strconv.Itoa(LockWaitTimeout)
	cfg.Params["max_statement_time"] = strconv.Itoa(StatementTimeout)
	cfg.ParseTime = true
	cfg.InterpolateParams = true
	cfg.ClientFoundRows = false
	return cfg.FormatDSN()
}

// Level spells a lab isolation level as MariaDB's tx_isolation takes it:
// "repeatable read" is REPEATABLE-READ.
func Level(level lab.Isolation) string {
	return strings.ToUpper(strings.ReplaceAll(string(level), " ", "-"))
}
