package scenarios

import (
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// All lists the scenarios in the order of the matrix's columns.
var All = []labtest.Scenario{
	{Name: "Duplicate", Short: "Dup", Claims: "C1, C9",
		Shows: "a repeat with the same data is a duplicate; the balance moves once", Run: Duplicate},
	{Name: "PayloadConflict", Short: "Conf", Claims: "C2, C6",
		Shows: "same key, other amount or account: a conflict error, nothing changes", Run: PayloadConflict},
	{Name: "Rollback", Short: "Roll", Claims: "C11, C12",
		Shows: "a failure between the inbox INSERT and the credit leaves neither; the retry applies", Run: Rollback},
	{Name: "FaultSweep", Short: "Fault", Claims: "C4, C11, C12",
		Shows: "errors before and after every statement, one-shot and persistent, panics, a full disk: " +
			"all or nothing, then applied once", Run: FaultSweep},
	{Name: "Crash", Short: "Crash", Claims: "C13",
		Shows: "the process killed before and after every statement, both journal modes: recovers to all or nothing, then applied once; no connection's journal_mode or synchronous gives a commit away", Run: Crash},
	{Name: "Concurrent", Short: "Conc", Claims: "C14, C17, C32",
		Shows: "20 (and 64) deliveries of one event on 8 goroutines: 1 applied, the rest duplicates, no error", Run: Concurrent},
	{Name: "Race", Short: "Race", Claims: "C3, C4, C10, C14, C32",
		Shows: "two deliveries at once, every interleaving: exactly one credit, one duplicate", Run: Race},
	{Name: "ConflictRace", Short: "CRace", Claims: "C2, C4",
		Shows: "one key, two amounts at once, every interleaving: one applies, the other is a conflict", Run: ConflictRace},
	{Name: "SourceScope", Short: "Src", Claims: "C5",
		Shows: "evt-1 from provider-b is a different event: it applies, and its repeat is its own duplicate", Run: SourceScope},
	{Name: "UnknownAccount", Short: "Acct", Claims: "C7",
		Shows: "an event for a missing account is an error; inbox and balances unchanged", Run: UnknownAccount},
	{Name: "InvalidInput", Short: "Inval", Claims: "C24",
		Shows: "bad keys, amounts and an overflowing balance: a clear error, nothing written", Run: InvalidInput},
	{Name: "SchemaGuards", Short: "Guard", Claims: "C7, C24",
		Shows: "rows only the schema can refuse (NULL, empty, oversized, zero, fractional, over the cap, no such account, a balance NULL or out of range): refused with their kind", Run: SchemaGuards},
	{Name: "Edges", Short: "Edge", Claims: "C24",
		Shows: "events exactly on the limits apply, and keys there that differ only by case, whitespace or Unicode form are distinct events; one unit past them is refused", Run: Edges},
	{Name: "DatabaseRefusal", Short: "Refus", Claims: "C8",
		Shows: "a row the schema refuses is an error, never a duplicate", Run: DatabaseRefusal},
	{Name: "DistinctEvents", Short: "Dist", Claims: "C21",
		Shows: "two events with equal account and amount both apply", Run: DistinctEvents},
	{Name: "LockTimeout", Short: "Lock", Claims: "C14, C15",
		Shows: "the write lock held elsewhere: busy, never duplicate, and at the caller's deadline; applies once later", Run: LockTimeout},
	{Name: "CommitWait", Short: "CWait", Claims: "C14, C15",
		Shows: "a reader's lock outlasts the busy timeout at COMMIT: busy, nothing kept; applies once later", Run: CommitWait},
	{Name: "Cancel", Short: "Cncl", Claims: "C4, C15",
		Shows: "the caller gives up before the call or after any statement: busy or the earned success, never half; then once", Run: Cancel},
	{Name: "PoolOfOne", Short: "Pool1", Claims: "C16",
		Shows: "on a pool of one connection, as correct's doc recommends: applied, then duplicate; no delivery waits for itself", Run: PoolOfOne},
	{Name: "BusinessKey", Short: "Biz*", Claims: "C20", Limit: "exercise 7 (exercises/businesskey)",
		Shows: "one payment reported as evt-1 and as evt-2 credits once", Run: BusinessKey},
	{Name: "Retention", Short: "Ret*", Claims: "C22", Limit: "exercise 8 (exercises/retention)",
		Shows: "after the inbox history is purged, a redelivery is still a duplicate", Run: Retention},
	{Name: "SideEffect", Short: "Mail*", Claims: "C18, C19", Limit: "exercise 9 (exercises/outbox)",
		Shows: "a receipt e-mailed on \"applied\" goes out once, even when the answer is lost after COMMIT", Run: SideEffect},
	{Name: "Property", Short: "Prop", Claims: "all",
		Shows: "rapid's random stories agree with a model of the ledger, or shrink to the smallest that does not", Run: Property},
	{Name: "Summary", Short: "Sum", Claims: "C17",
		Shows: "the article's own run: balance 1500, inbox 3, applied 1, duplicate 19", Run: Summary},
	{Name: "LostResponse", Short: "Lost", Claims: "C13, C35",
		Shows: "over HTTP: the 200 lost after COMMIT, the provider times out and retries: 200 replayed, one credit; a provider that leaves mid-request: rolled back, its retry applies", Run: LostResponse},
	{Name: "RetryAfterBusy", Short: "Retry", Claims: "C15, C23",
		Shows: "over HTTP, the lock held elsewhere: 503 with Retry-After, never 200; the provider waits as asked, retries, applies once", Run: RetryAfterBusy},
	{Name: "ConflictOverHTTP", Short: "422", Claims: "C2, C23",
		Shows: "over HTTP, the key again with another amount: 422 on each of the provider's 8 attempts; the balance moves once", Run: ConflictOverHTTP},
	{Name: "Forged", Short: "Forge", Claims: "C27, C28, C36",
		Shows: "unsigned, forged, stale, cross-source and tampered requests and a flood: 401, none reaches the handler; the genuine event then applies", Run: Forged},
	{Name: "Burst", Short: "Burst", Claims: "C17, C23",
		Shows: "over HTTP, 10 signed deliveries of 4 events from 3 providers at once: each applied once, no 5xx", Run: Burst},
}

// credit is the event most scenarios deliver: provider-a's id, to account 1.
func credit(eventID string, amount int64) lab.Event {
	return lab.Event{Source: "provider-a", EventID: eventID, AccountID: 1, Amount: amount}
}

// copies returns n deliveries of e.
func copies(e lab.Event, n int) []lab.Event {
	out := make([]lab.Event, n)
	for i := range out {
		out[i] = e
	}
	return out
}
