// Package missingaccount is the starting point of an exercise (EXERCISES.md):
// an event for a missing account must leave the inbox unchanged.
//
// An event for account 99, which does not exist, is answered "applied" and leaves a row in the inbox. Change this package until its check passes:
//
//	go test ./checks -exercise=missingaccount
package missingaccount
