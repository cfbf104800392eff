// Package retention is the starting point of an exercise (EXERCISES.md):
// clearing old inbox history must not re-open events that can still be
// redelivered.
//
// The inbox is the handler's memory of what it has applied, and it grows
// with every event. Purge keeps it small — by deleting everything, so an
// event that the provider redelivers an hour later (providers retry for
// days) looks new and is credited again. Change Purge until the check
// passes:
//
//	go test ./checks -exercise=retention
package retention
