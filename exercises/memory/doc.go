// Package memory is the starting point of an exercise (EXERCISES.md): why
// the lab's databases are files, never ":memory:".
//
// An in-memory database is tempting for tests — nothing to clean up, no
// disk — and DSN below uses one. But database/sql keeps a pool of
// connections, and for SQLite every ":memory:" connection is a database of
// its own: the schema created on one connection does not exist on the next.
// Change DSN until the check passes:
//
//	go test ./checks -exercise=memory
package memory
