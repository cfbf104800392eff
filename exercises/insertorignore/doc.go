// Package insertorignore is the starting point of an exercise (EXERCISES.md):
// a row the schema refuses must be an invalid event, not swallowed.
//
// When the schema refuses the inbox row, the handler never hears of it. Change this package until its check passes:
//
//	go test ./checks -exercise=insertorignore
package insertorignore
