// Package commitmismatch is package correct that commits, rather than
// rolls back, before it answers a payload conflict.
//
// It is equivalent because on that path the transaction wrote nothing: the
// INSERT ... DO NOTHING found the stored row and changed no row, and the
// SELECT only read. Committing a transaction that wrote nothing keeps
// nothing, exactly as rolling it back does; the answer is the same
// lab.ErrPayloadConflict. (A failed COMMIT there is still answered with its
// own error, since the delivery did not finish.)
//
// Compare: diff -u correct/process.go equivalent/commitmismatch/process.go
package commitmismatch
