// Package newvariant is a reference solution of the newvariant exercise:
// a handler that folds event ids to lower case ("ids are case-insensitive,
// surely"), and the scenario that catches it — evt-A and evt-a are two
// events, and both must credit.
package newvariant
