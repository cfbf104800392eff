package checks

// CheckThenAct is the check of the checkthenact exercise: the whole matrix
// held to the correct standard, the races and faults first, then
// RaceSearch.
//
// RaceSearch is the ledger property (see ledger_test.go), its stories drawing
// most on races: 100 stories at -rapid.checks=100. Its dimensions:
//
//   - concurrency: two or three sessions, each delivering one or two events
//     (new, repeated, with another payload, twins, for a missing account),
//     interleaved at every statement by a schedule rapid draws, sometimes
//     with an error injected into the first BEGIN, INSERT, UPDATE, SELECT,
//     COMMIT or DELETE any of them runs;
//   - data: amounts of 1 and at the cap, on balances where one credit fits
//     and two do not (the cap under a race: the loser of a race for one
//     event is a duplicate, never refused by the balance's CHECK), twins of
//     known keys, among them ids and sources that are GLOB or LIKE
//     patterns of a known key's (evt-? beside evt-1, evt-%, evt-[1]:
//     PatternTwin), whose repeat a lookup of the stored payload by pattern
//     compares with the known event's row;
//   - pool shape, faults and crashes as every ledger property's (one
//     connection: the deliveries queue for it);
//   - time: the handler is given none; if it reads time.Now (or SQLite's
//     localtime), it reads it in the process's time zone, a sixth of the
//     stories in each of six zones (see Search);
//   - the model: the answers and the database are those of some order of
//     the deliveries, each one that failed entirely applied or not at all.
var CheckThenAct = Repair([]string{"Race", "ConflictRace", "Concurrent", "FaultSweep"}, raceSearch)

var raceSearch = repairSearch("checkthenact", "RaceSearch",
	"rapid's stories of two or three sessions at once, interleaved at every statement, at the balance cap and under faults: the answers and the database of one order of them",
	100, map[string]int{"New": 2, "Repeat": 2, "Changed": 1, "Twin": 1, "Missing": 1, "Invalid": 1, "Refused": 1, "MisCredit": 1,
		"Fault": 1, "Crash": 1, "Race": 8, "FaultRace": 2, "Reconnect": 1, "Lost": 1, "Restart": 1, "PatternTwin": 2})
