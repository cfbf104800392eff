// Package scenarios holds the stories told to every variant, the columns of
// the verdict matrix. A scenario body uses only the lab: it opens a database
// for whatever variant it is given, delivers events, and states what the
// correct handler must answer. scenarios_test.go runs every scenario against
// every variant and compares the verdicts with the golden matrix.
package scenarios
