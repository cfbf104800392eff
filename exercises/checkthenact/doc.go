// Package checkthenact is the starting point of an exercise (EXERCISES.md):
// two deliveries at once must credit once.
//
// Two deliveries of the same event at the same time can both credit. Change this package until its check passes:
//
//	go test ./checks -exercise=checkthenact
package checkthenact
