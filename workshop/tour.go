package workshop

import "strings"

// The guided tour of the kit, as data: seven steps in the article's own
// order, from the seed's 20 deliveries to the limits of the
// pattern. Each step gives one thing to run (a go run ./cmd/lab command)
// or to click (a path on the workshop page), what to look at in what it
// shows, a question to ask the room, and the answer, to be revealed only
// when the room has had its go.
//
// go run ./cmd/lab tour prints it in the terminal; the page's Tour tab
// (/tour) shows the same Tour, each answer behind a reveal. cmd/lab's tests run every step's command and hold
// its output to the step's Expect, so what a step says to look at is there.

// TourStep is one stop of the tour.
type TourStep struct {
	// Title names the step: "The race".
	Title string
	// Run is the command to run, as arguments of go run ./cmd/lab:
	// {"explain", "checkthenact", "race"}.
	Run []string
	// Click is the same on the workshop page (go run ./cmd/lab web): a
	// path with its query, "/cell?v=checkthenact&s=race".
	Click string
	// Look says what to look at in what Run prints.
	Look string
	// Expect are the lines, or parts of lines, of Run's output that Look
	// points at: each is in the output, and Look quotes each.
	Expect []string
	// Question is what to ask the room before anyone reads further.
	Question string
	// Answer is what the room should find; show it only when asked.
	Answer string
}

// Command is the step's Run as a learner types it.
func (s TourStep) Command() string { return "go run ./cmd/lab " + strings.Join(s.Run, " ") }

// Tour is the guided tour, in the article's order.
var Tour = []TourStep{
	{
		Title: "The seed's 20 deliveries",
		Run:   []string{"column", "Summary"},
		Click: "/cell?v=correct&s=Summary",
		Look: `the article's own run, told to every variant: evt-1 applied, repeated and repeated ` +
			`with another amount; evt-2 failing half-way and retried; evt-3 delivered 20 times on ` +
			`8 goroutines. correct ends "OK: balance=1500, inbox=3, applied=1, duplicate=19"; ` +
			`naive/checkthenact ends "balance=5000".`,
		Expect: []string{"OK: balance=1500, inbox=3, applied=1, duplicate=19", "balance=5000"},
		Question: "Twenty deliveries of evt-3 arrive at once. How many may move the balance, and " +
			"what should the other nineteen be told?",
		Answer: "One. The other nineteen are duplicates: answered as a success (the provider may " +
			"stop retrying) and changing nothing. checkthenact lets eight of them credit because " +
			"its \"seen it?\" check and its write are separate statements.",
	},
	{
		Title: "The duplicate",
		Run:   []string{"explain", "insertorreplace", "Dup"},
		Click: "/cell?v=insertorreplace&s=Dup",
		Look: `the same event delivered twice with the same data. The inbox has its primary key, ` +
			`yet B2, "INSERT OR REPLACE", answers "-> 1 row", B is told applied, and the check ` +
			`says "balance of account 1 = 1000, want 500".`,
		Expect:   []string{"INSERT OR REPLACE", "-> 1 row", "balance of account 1 = 1000, want 500"},
		Question: "The key is there and it is unique. Why does the repeat still credit?",
		Answer: "INSERT OR REPLACE resolves the key conflict by deleting the stored row and " +
			"inserting the new one, and reports one row changed, exactly as for a new event. " +
			"The handler reads \"1 row\" as \"new\" and credits again. Name the conflict you " +
			"expect, ON CONFLICT (source, event_id) DO NOTHING, so that a repeat inserts 0 rows.",
	},
	{
		Title: "The race",
		Run:   []string{"explain", "checkthenact", "race"},
		Click: "/step?v=checkthenact&s=race",
		Look: `two deliveries of one event at once, in the shortest schedule that breaks it, ` +
			`"A1 B1 A2 B2 A3 B3". Both SELECTs find "-> no row", both UPDATEs credit, and only ` +
			`B3's INSERT hits the key: "UNIQUE constraint failed". Then "balance of account 1 = ` +
			`1000, want 500".`,
		Expect: []string{"A1 B1 A2 B2 A3 B3", "-> no row", "UNIQUE constraint failed",
			"balance of account 1 = 1000, want 500"},
		Question: "The primary key refused B's INSERT. Why is the balance still 1000, and what " +
			"would make the key's refusal enough?",
		Answer: "Each statement committed on its own: B's UPDATE was kept before its INSERT failed, " +
			"and nothing takes it back. Put the inbox INSERT first and the credit in the same " +
			"transaction (BEGIN IMMEDIATE): the key then decides who applies, and the loser's " +
			"credit never happens. A check before the write only narrows the gap.",
	},
	{
		Title: "The rollback",
		Run:   []string{"explain", "markfirst", "roll"},
		Click: "/cell?v=markfirst&s=Rollback",
		Look: `a failure injected between the inbox INSERT and the credit. markfirst committed ` +
			`the inbox row on its own, "A3: COMMIT", before the UPDATE that failed, so "inbox ` +
			`rows = 1, want 0"; the provider's retry is then "= duplicate, want applied", and ` +
			`"balance of account 1 = 0, want 500".`,
		Expect: []string{"A3: COMMIT", "inbox rows = 1, want 0", "= duplicate, want applied",
			"balance of account 1 = 0, want 500"},
		Question: "The credit failed and the provider retried, as it should. Where did the money go?",
		Answer: "Nowhere: the event is marked as handled but was never applied, and every retry " +
			"is now a duplicate, so it never will be. The mark and the effect must commit " +
			"together or not at all: one transaction, rolled back whole on any error.",
	},
	{
		Title: "The payload conflict",
		Run:   []string{"explain", "idonly", "conf"},
		Click: "/cell?v=idonly&s=Conf",
		Look: `evt-1 again under the same key, now with "amount=700" (and then for another ` +
			`account). idonly answers duplicate without comparing: "= duplicate, want an error ` +
			`(payload conflict)".`,
		Expect:   []string{"amount=700", "= duplicate, want an error (payload conflict)"},
		Question: "Same key, other amount. Is it a repeat? What should the sender hear?",
		Answer: "Not a repeat: a broken contract. The inbox keeps the account and the amount beside " +
			"the key, so a known key with other data is answered with a conflict error (422 over " +
			"HTTP) and changes nothing. \"Duplicate\" would hide the sender's bug.",
	},
	{
		Title: "The lock timeout is not a duplicate",
		Run:   []string{"explain", "busyasduplicate", "lock"},
		Click: "/cell?v=busyasduplicate&s=Lock",
		Look: `another connection holds the write lock. A1's BEGIN IMMEDIATE gets "database is ` +
			`locked", B's waits out the caller's deadline, "context deadline exceeded", and both ` +
			`are answered duplicate: "= duplicate, want an error (busy)". Once the lock is ` +
			`released, C applies.`,
		Expect: []string{"database is locked", "context deadline exceeded", "= duplicate, want an error (busy)"},
		Question: "The handler could not read the inbox at all. What does it know about the event, " +
			"and what must it answer?",
		Answer: "Nothing: it never saw the inbox. \"Duplicate\" tells the provider to stop, and an " +
			"event that was never applied is lost. The only honest answer is busy, retry later " +
			"(503 with Retry-After over HTTP), and the retry applies it once.",
	},
	{
		Title: "The limits of the pattern",
		Run:   []string{"row", "correct"},
		Click: "/?b=sqlite",
		Look: `correct holds every column but the three marked *: "✗ BusinessKey*" (one payment ` +
			`under two ids credits twice), "✗ Retention*" (a redelivery after the inbox was ` +
			`purged applies again) and "✗ SideEffect*" (the receipt e-mail is lost, or sent ` +
			`twice, around the COMMIT).`,
		Expect:   []string{"✗ BusinessKey*", "✗ Retention*", "✗ SideEffect*"},
		Question: "correct is correct. Why does it fail these three, and what would lift each?",
		Answer: "An inbox keyed by event id knows events, not operations, not the past it purged, " +
			"not the world outside its database. A business key (the payment's own id) lifts the " +
			"first (exercise 7), keeping rows as long as the provider may redeliver lifts the " +
			"second (exercise 8), an outbox written in the same transaction lifts the third " +
			"(exercise 9).",
	},
}
