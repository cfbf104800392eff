package variants

import (
	"idemlab/lab"
	"idemlab/naive/checkthenacttx"
	"idemlab/naive/forupdate"
	"idemlab/naive/serialasduplicate"
)

// PostgresOnly are the rows that the PostgreSQL matrix has and SQLite's has
// not: mistakes that PostgreSQL's isolation levels make, or unmake, which
// SQLite's single writer never shows. On SQLite each of them is correct,
// which is their lesson: the same Go code can be right on one database and
// wrong on the other. Those with a MariaDB form (checkthenacttx,
// forupdate) are rows of the MariaDB matrices too, where InnoDB's locks
// draw the line between right and wrong at other levels.
var PostgresOnly = []lab.Variant{
	checkthenacttx.Variant,
	forupdate.Variant,
	serialasduplicate.Variant,
}
