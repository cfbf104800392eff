package checks

// MissingAccount is the check of the missingaccount exercise: the whole
// matrix held to the correct standard, UnknownAccount first.
var MissingAccount = Handler([]string{"UnknownAccount"})
