// Package newvariant is a reference solution of the newvariant exercise:
// a handler that folds event ids to lower case ("ids are case-insensitive,
// surely"). The scenario that catches it — evt-A and evt-a are two events,
// and both must credit — is a test of package checks, beside the check
// that holds the two to the exercise (TestNewVariant in
// checks/solutions_test.go).
package newvariant
