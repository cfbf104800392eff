package variants

import (
	"idemlab/lab"
	"idemlab/naive/deadlockasduplicate"
	"idemlab/naive/foundrows"
	"idemlab/naive/insertignore"
	"idemlab/naive/timeoutswallow"
)

// MariaDBOnly are the rows that only the MariaDB matrices have: mistakes
// that MariaDB's dialect, driver or locking makes, which neither SQLite nor
// PostgreSQL shows. On the other engines each of them has no row.
var MariaDBOnly = []lab.Variant{
	deadlockasduplicate.Variant,
	foundrows.Variant,
	insertignore.Variant,
	timeoutswallow.Variant,
}
