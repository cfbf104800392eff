package repeatableread

// Schema is the kit's schema in MariaDB's dialect, one statement each, as
// correct/'s MariaDBSchema is: the key columns compare byte by byte
// (utf8mb4_nopad_bin), the key's limit is in bytes (OCTET_LENGTH), and the
// inbox row's foreign key names its account.
var Schema = []string{`
CREATE TABLE accounts (
	id      BIGINT PRIMARY KEY,
	balance BIGINT NOT NULL DEFAULT 0
	        CHECK (balance BETWEEN 0 AND 1000000000000000)
) ENGINE=InnoDB`, `
CREATE TABLE inbox (
	source     VARCHAR(128) NOT NULL CHECK (OCTET_LENGTH(source) BETWEEN 1 AND 128),
	event_id   VARCHAR(128) NOT NULL CHECK (OCTET_LENGTH(event_id) BETWEEN 1 AND 128),
	account_id BIGINT NOT NULL,
	amount     BIGINT NOT NULL CHECK (amount BETWEEN 1 AND 1000000000),
	PRIMARY KEY (source, event_id),
	FOREIGN KEY (account_id) REFERENCES accounts (id)
) ENGINE=InnoDB CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`}
