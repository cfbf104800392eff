// Package replay is the reference solution of the replay exercise: the
// inbox row keeps the first answer (balance_after), written in the same
// transaction as the credit, and a repeat reads it back instead of the
// balance as it is now.
package replay
