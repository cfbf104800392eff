// Package sourcescope is the starting point of an exercise (EXERCISES.md):
// evt-1 from provider-b must credit.
//
// The provider-b event evt-1 is a different event from provider-a's evt-1, but this handler drops it as a repeat. Change this package until its check passes:
//
//	go test ./checks -exercise=sourcescope
package sourcescope
