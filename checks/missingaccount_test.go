package checks

// MissingAccount is the check of the missingaccount exercise: the whole
// matrix held to the correct standard, UnknownAccount first, then
// AccountSearch.
//
// AccountSearch is the ledger property (see ledger_test.go), its stories
// drawing most on accounts and connections: 100 stories at
// -rapid.checks=100. Its dimensions:
//
//   - data: events for an account that does not exist; a bug that hands
//     the INSERT a missing account (99, or 0) while the credit goes to the
//     event's, on a new event or a repeat, and one that hands the credit a
//     missing account while the INSERT has the event's; the INSERT's other
//     columns handed values the schema refuses;
//   - pool shape: one connection, two, or as many as the handler opens; the
//     pool's idle connections closed mid-story, and a connection lost under
//     a BEGIN (driver.ErrBadConn: database/sql begins again on a new one),
//     so that a delivery meets only what the DSN sets on every connection (a
//     PRAGMA run once, or just before, on another connection is not there);
//     a handler that began on a connection of its own (db.Conn) gets the
//     error, and may answer it if it wrote nothing: the provider's retry,
//     which follows, must then apply the event; new connections opened by
//     deliveries at once;
//   - state: half the stories start from a database whose inbox holds a
//     row for an account deleted since (provider-a's evt-0 for account 3,
//     written with foreign keys off: orphanRow), which must refuse no
//     later event, nor credit anything;
//   - concurrency, faults and crashes as every ledger property's;
//   - time: an account holds no instant; a handler that reads time.Now (or
//     SQLite's localtime) reads it in the process's time zone, a sixth of
//     the stories in each of six zones (see Search);
//   - the model: no new inbox row for an account that does not exist, no
//     success for a credit that went nowhere, and every valid event for
//     an account that exists applied, whatever rows from before the inbox
//     holds.
var MissingAccount = Repair([]string{"UnknownAccount"}, accountSearch)

var accountSearch = ledgerSearch(ledgerSpec{propertySpec: propertySpec{exercise: "missingaccount", name: "AccountSearch", stories: 100,
	shows: "rapid's stories of missing accounts handed to the INSERT or to the credit, on pools of one and many connections, some opened mid-story, some from an inbox row whose account is gone: never a row or a success for an account that does not exist, every valid event applied (a delivery whose connection the lab breaks may fail if it wrote nothing; its retry must apply)"},
	orphan: true,
	weights: map[string]int{"New": 2, "Repeat": 1, "Changed": 1, "Twin": 1, "Missing": 3, "Invalid": 1, "Refused": 5, "MisCredit": 3,
		"Fault": 1, "Crash": 1, "Race": 3, "FaultRace": 1, "Reconnect": 3, "Lost": 3, "Restart": 1}})
