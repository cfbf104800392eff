package checks

// InsertOrIgnore is the check of the insertorignore exercise: the whole
// matrix held to the correct standard, DatabaseRefusal first, then
// RefusalSearch.
//
// RefusalSearch is the ledger property (see ledger_test.go), its stories
// drawing most on rows the schema refuses: 100 stories at
// -rapid.checks=100. Its dimensions:
//
//   - data: a bug that hands the INSERT one value the schema refuses — an
//     amount of 0, negative, over the cap or fractional, an empty or NULL
//     source, a 129-byte event id, a missing account — on a new event or on
//     a repeat (a repeat's row refused is an error too, never a duplicate);
//     a bug that hands the credit a missing account; events Validate
//     refuses, just past each limit; credits the balance's cap refuses;
//   - faults: as every ledger property's, an error before or after any
//     statement of a delivery, at the INSERT too, alone or in a race: its
//     answer is no kind of the event's (invalid event, unknown account,
//     payload conflict), which would tell the provider that retrying
//     cannot help;
//   - concurrency, pool shape and crashes as every ledger property's;
//   - time: the handler is given none; if it reads time.Now (or SQLite's
//     localtime), it reads it in the process's time zone, a sixth of the
//     stories in each of six zones (see Search);
//   - the model: a row the schema refuses is an error of its kind (invalid
//     event; unknown account for a missing account on a row the INSERT
//     would add), and nothing is written.
var InsertOrIgnore = Repair([]string{"DatabaseRefusal"}, refusalSearch)

var refusalSearch = repairSearch("insertorignore", "RefusalSearch",
	"rapid's stories of rows a bug makes the schema refuse, on new events and repeats, at once or one by one: an error of its kind, never a duplicate, nothing written",
	100, map[string]int{"New": 2, "Repeat": 2, "Changed": 1, "Twin": 1, "Missing": 1, "Invalid": 2, "Refused": 6, "MisCredit": 2,
		"Fault": 1, "Crash": 1, "Race": 2, "FaultRace": 1, "Reconnect": 1, "Lost": 1, "Restart": 1})
