// Package readfirst is package correct that reads the stored row before it
// inserts: SELECT account_id, amount FROM inbox, then the INSERT only when
// there is none.
//
// It is equivalent because both statements run in one BEGIN IMMEDIATE
// transaction: the write lock is held from BEGIN, so no other delivery can
// store the event between the SELECT and the INSERT. The check-then-act
// that breaks naive/checkthenact is safe here because nothing can change
// between the check and the act. The INSERT keeps its ON CONFLICT clause, a
// belt to the lock's braces.
//
// Compare: diff -u correct/process.go equivalent/readfirst/process.go
package readfirst
