package variants

import "idemlab/lab"

// PostgresOnly are the rows that only the PostgreSQL matrix has: mistakes
// that PostgreSQL's isolation levels make, or unmake, which SQLite's single
// writer never shows. On SQLite each of them is correct, which is their
// lesson: the same Go code can be right on one database and wrong on the
// other.
var PostgresOnly = []lab.Variant{}
