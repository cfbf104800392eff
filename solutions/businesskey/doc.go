// Package businesskey is the reference solution of the businesskey
// exercise: besides the event's key, the operation has a key of its own
// (one activation per order), claimed with INSERT … ON CONFLICT DO NOTHING
// in the same transaction.
package businesskey
