// Package newvariant is the starting point of the last exercise
// (EXERCISES.md): invent a mistake of your own, write it as a naive variant,
// and write the scenario that catches it.
//
// Variant is, for now, the correct handler (process.go and schema.go are
// copies of correct/'s), and Scenario asserts nothing. Put one mistake into
// the handler, and make Scenario tell the story that exposes it: the check
// wants Scenario to hold on correct/ and to fail on Variant.
//
//	go test ./exercises/newvariant -exercise
package newvariant
