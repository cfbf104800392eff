// Package replay is the starting point of an exercise (EXERCISES.md): a
// repeat must get the answer the first delivery got.
//
// The handler answers with a receipt: the outcome and the account's balance
// right after the event was applied. A provider that retries because it
// lost the first answer must get that same receipt back — but this handler
// reports the balance as it is now, which other credits may have moved.
// Change it until its check passes:
//
//	go test ./checks -exercise=replay
package replay
