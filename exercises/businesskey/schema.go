package businesskey

import "idemlab/lab"

// Schema creates the orders and the inbox of payment events.
const Schema = `
CREATE TABLE orders (
	id          TEXT    PRIMARY KEY,
	activations INTEGER NOT NULL DEFAULT 0
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
//
// lab.SQLiteFile escapes the path: the DSN is a URI, where a '?' would
// start the settings, a '#' end them, a '%' begin an escape and a leading
// "//" a host name, so an unescaped file name holding one would open
// another file, or this one without the settings.
func DSN(path string) string {
	return lab.SQLiteFile(path) + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_txlock=immediate"
}
