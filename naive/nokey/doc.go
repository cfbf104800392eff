// Package nokey is checkthenact without a primary key on the inbox: the
// handler is the same, only the schema differs.
//
// The mistake is described under BUGS (go doc ./naive/nokey).
//
// The fix: PRIMARY KEY (source, event_id), and letting that key decide inside
// the transaction, as the correct variant does.
//
// On PostgreSQL it makes the same mistake with the same code and a schema
// without the key (PostgresSchema), as checkthenact's PostgreSQL form does
// with the key. Caught there by the races and Concurrent at every
// isolation level: no isolation level orders two autocommit statements.
//
// Compare: diff -u correct/schema.go naive/nokey/schema.go
package nokey

// BUG(lab): nothing in the database says that (source, event_id) is unique.
// When two deliveries both read "not seen", both credit and both INSERT
// succeed: two credits and two inbox rows for one event, with no error to
// show for it (claim C3). Caught by Race and Concurrent.
