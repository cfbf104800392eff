package businesskey

import "fmt"

// Schema creates the orders and the inbox of payment events.
const Schema = `
CREATE TABLE orders (
	id          TEXT    PRIMARY KEY,
	activations INTEGER NOT NULL DEFAULT 0
) STRICT;

-- One row per business operation, whatever the events that report it:
-- the key that makes "activate order-42" happen once.
CREATE TABLE activations (
	order_id TEXT NOT NULL PRIMARY KEY REFERENCES orders (id)
) STRICT;

CREATE TABLE inbox (
	source   TEXT    NOT NULL,
	event_id TEXT    NOT NULL,
	order_id TEXT    NOT NULL REFERENCES orders (id),
	amount   INTEGER NOT NULL CHECK (amount > 0),
	PRIMARY KEY (source, event_id)
) STRICT;
`

// DSN returns the connection string for the database file at path.
func DSN(path string) string {
	return fmt.Sprintf("file:%s?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_txlock=immediate", path)
}
