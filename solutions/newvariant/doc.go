// Package newvariant is a reference solution of the newvariant exercise:
// a handler that writes an event id that is a number one way ("the
// provider's ids are numbers; some senders pad them with zeros"), so that
// 007 and 7 are one event. They are two: a provider's id is a string, and
// the second is answered a payload conflict, or a duplicate, instead of
// applied. No column of the matrix draws an id with a leading zero, so none
// tells this handler from correct/. The scenario that catches it —
// "0042" and "42" are two events, and both must credit — is a test of
// package checks, beside the check that holds the two to the exercise
// (TestSolutionNewVariant in checks/solutions_test.go).
package newvariant
