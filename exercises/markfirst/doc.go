// Package markfirst is the starting point of an exercise (EXERCISES.md):
// a failure between the mark and the credit must leave neither.
//
// A failure after the inbox row is written loses the credit for good: the retry is taken for a duplicate. Change this package until its check passes:
//
//	go test ./checks -exercise=markfirst
package markfirst
