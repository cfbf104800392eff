package checkthenact

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
