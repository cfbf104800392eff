// Package newvariant is the starting point of the last exercise
// (EXERCISES.md): invent a mistake of your own, write it as a naive variant,
// and write the scenario that catches it.
//
// Variant is, for now, the correct handler (process.go and schema.go are
// copies of correct/'s), and its scenario, MyScenario in
// checks/newvariant_scenario_test.go, asserts nothing. Put one mistake into the
// handler, and make MyScenario tell the story that exposes it: the check
// wants MyScenario to hold on correct/ and on every handler that does what
// correct/ does, to fail on Variant by an expectation of its own, and no
// column of the matrix to tell Variant from correct/ (EXERCISES.md, 11).
//
//	go test ./checks -exercise=newvariant
package newvariant
