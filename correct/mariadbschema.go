package correct

import (
	"database/sql"

	"idemlab/lab"
	"idemlab/mariadb"
)

// MariaDB describes the handler on MariaDB to the lab: MariaDBSchema,
// mariadb.DSN, and MariaDBHandler under mariadb.Retry.
var MariaDB = &lab.MariaDB{
	Schema: MariaDBSchema,
	DSN:    mariadb.DSN,
	New:    func(db *sql.DB) lab.Processor { return mariadb.Retry(NewMariaDB(db)) },
}

// MariaDBSchema is Schema in MariaDB's dialect, one statement each:
// BIGINT for INTEGER, VARCHAR(128) for TEXT (a key needs a length), InnoDB
// for the transactions and the foreign key. The key's limit is in bytes,
// as Validate counts them and Schema's octet_length CHECKs do. VARCHAR(M)
// counts characters ("M represents the maximum column length in
// characters", https://mariadb.com/kb/en/varchar/): VARCHAR(128) takes any
// 128 bytes, but also 64 two-byte characters and one byte, 129 bytes. So
// the CHECK counts bytes, with OCTET_LENGTH ("the length of the given
// string, in octets (bytes)", https://mariadb.com/kb/en/octet_length/),
// not CHAR_LENGTH, nor LENGTH, which counts characters under
// sql_mode=ORACLE; TestMariaDBSchemaKeyBytes holds it on a server. The key
// columns compare byte by byte (utf8mb4_nopad_bin): under the server's
// default collation, utf8mb4_general_ci, 'evt_A' and 'evt_a ' are the same
// key as 'evt_a', and the second event would be answered duplicate. The
// same NOT NULLs, CHECKs, foreign key and primary key.
var MariaDBSchema = []string{`
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
