package checkthenact

import (
	"net/url"
	"strings"

	"idemlab/lab"
)

// PostgresSchema is Schema in PostgreSQL's dialect. BIGINT where SQLite
// says INTEGER (PostgreSQL's integer is 32 bits); no STRICT, because
// PostgreSQL's columns keep their types anyway; the same NOT NULLs, CHECKs,
// foreign key and primary key.
const PostgresSchema = `
CREATE TABLE accounts (
	id      BIGINT PRIMARY KEY,
	balance BIGINT NOT NULL DEFAULT 0
	        CHECK (balance BETWEEN 0 AND 1000000000000000)
);

CREATE TABLE inbox (
	source     TEXT   NOT NULL CHECK (octet_length(source) BETWEEN 1 AND 128),
	event_id   TEXT   NOT NULL CHECK (octet_length(event_id) BETWEEN 1 AND 128),
	account_id BIGINT NOT NULL REFERENCES accounts (id),
	amount     BIGINT NOT NULL CHECK (amount BETWEEN 1 AND 1000000000),
	PRIMARY KEY (source, event_id)
);
`

// PostgresDSN returns the connection string for the database at server
// (a postgres:// URL), with the handler's settings as run-time parameters,
// which PostgreSQL applies to every connection:
//
//   - default_transaction_isolation: the level every BEGIN gets. The
//     handler holds at each of them; at REPEATABLE READ and SERIALIZABLE a
//     delivery racing an uncommitted copy of itself fails with 40001, and
//     Retry runs it again;
//   - lock_timeout = 2s: wait at most that long for a row another delivery
//     holds, then fail with 55P03 (busy, never duplicate);
//   - statement_timeout = 5s: no statement runs longer.
//
// The timeouts are the server's on purpose: pgx answers a cancelled
// context by closing the connection, which is a blunter tool.
func PostgresDSN(server string, level lab.Isolation) string {
	u, err := url.Parse(server)
	if err != nil {
		return server // pgx reports the malformed string itself
	}
	q := u.Query()
	q.Set("default_transaction_isolation", string(level))
	q.Set("lock_timeout", "2s")
	q.Set("statement_timeout", "5s")
	// A space must be %20: pgx does not read a + in a query as a space.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}
