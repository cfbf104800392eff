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
//
// A right purge still has a limit (claim C22): an event resent by hand
// after its window, from a provider's dashboard say, finds no row and is
// credited again. The check's last case shows it and expects it.
package retention
