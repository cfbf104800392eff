// Package nofk switches foreign keys on with a PRAGMA in its setup script
// instead of in the DSN.
//
// The mistake is described under BUGS (go doc ./naive/nofk).
//
// The fix: _pragma=foreign_keys(1) in the DSN, so that every connection the
// pool opens has it.
//
// Compare: diff -u correct/schema.go naive/nofk/schema.go
package nofk

// BUG(lab): PRAGMA foreign_keys is a setting of one connection, not of the
// database file. The setup connection enforced REFERENCES; the handler's
// connections, opened later by database/sql, do not. An event for a missing
// account is stored in the inbox, the UPDATE changes no row, and the handler
// answers "applied" for a credit that went nowhere (article C7). Caught by
// UnknownAccount.
