// Package foundrows is the correct handler on MariaDB, except for one
// setting of its connection string: clientFoundRows=true, which
// go-sql-driver/mysql documents as returning "the number of found
// (matched) rows instead of the number of changed rows". The handler is
// correct's; its INSERT … ON DUPLICATE KEY UPDATE source = source counts
// 1 row for a new event and, with the flag, 1 row for a duplicate too
// (0 without it), so every repeat reads as a new event.
//
// It has no row on SQLite or PostgreSQL, whose drivers have no such flag.
//
// Compare: diff -u correct/mariadbschema.go's MariaDB with this Variant.
package foundrows

// BUG(lab): a DSN flag is a double credit: with clientFoundRows=true a
// repeat counts 1 row, the count of a new event, and is credited again and
// answered "applied". Caught by Duplicate, and by every scenario that
// redelivers an applied event, at every level.
