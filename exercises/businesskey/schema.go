package businesskey

import "net/url"

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
// The path is escaped: the DSN is a URI, where a '?' would start the
// settings, a '#' end them and a '%' begin an escape, so an unescaped file
// name holding one would open another file without the settings.
func DSN(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_txlock=immediate"
}
