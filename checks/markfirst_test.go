package checks

// MarkFirst is the check of the markfirst exercise: the whole matrix held
// to the correct standard, the failures between the mark and the credit
// first, then FaultSearch.
//
// FaultSearch is the ledger property (see ledger_test.go), its stories drawing
// most on failures: 100 stories at -rapid.checks=100. Its dimensions:
//
//   - faults: an error before or after any statement of a new event or a
//     repeat, then the redelivery; the process killed before or after any
//     statement, the service restarted, then the redelivery; an error
//     injected into a race, so that one delivery fails while another waits
//     for it or runs the same event;
//   - data: a bug that hands the credit a missing account, or the INSERT a
//     value the schema refuses, so that the credit or the row fails after
//     the other ran;
//   - concurrency and pool shape as every ledger property's;
//   - time: the handler is given none; if it reads time.Now (or SQLite's
//     localtime), it reads it in the process's time zone, a sixth of the
//     stories in each of six zones (see Search);
//   - the model: after any failure the database holds all of the event or
//     none of it, a success is never answered for work not kept, and the
//     redelivery finishes the job once.
var MarkFirst = Repair([]string{"Rollback", "FaultSweep", "Crash"}, faultSearch)

var faultSearch = repairSearch("markfirst", "FaultSearch",
	"rapid's stories of errors and crashes at every statement, alone or in a race, and of bugs that make the credit or the row fail: all of an event or none of it, then once",
	100, map[string]int{"New": 2, "Repeat": 1, "Changed": 1, "Twin": 1, "Missing": 1, "Invalid": 1, "Refused": 2, "MisCredit": 3,
		"Fault": 4, "Crash": 3, "Race": 4, "FaultRace": 4, "Reconnect": 1, "Lost": 1, "Restart": 1})
