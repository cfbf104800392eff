// Package businesskey is the starting point of an exercise (EXERCISES.md):
// one paid order must be activated once, even when the provider reports the
// payment under two event ids.
//
// The inbox deduplicates events, and it does that well: evt-1 twice is one
// event. But a provider that sends "payment succeeded" for order-42 as
// evt-1 and again as evt-2 has sent two events about one business
// operation, and this handler activates the order twice. Change it until
// its check passes:
//
//	go test ./checks -exercise=businesskey
package businesskey
