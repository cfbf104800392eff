// Package lab holds what every variant and every scenario shares: the event
// and its validation, the outcomes and error kinds a handler answers with, the
// statement-hooking driver that records transcripts and injects faults below
// the code under test, the scheduler that interleaves deliveries one statement
// at a time, the invariants checked after every scenario, and the verdict
// matrix.
//
// The lab imports no variant. A variant is described to it by a [Variant]
// value (its name, schema, DSN and constructor), so the same scenario body
// runs unchanged against the correct handler and against every naive one.
package lab
