package checks

// InsertOrIgnore is the check of the insertorignore exercise: the whole
// matrix held to the correct standard, DatabaseRefusal first.
var InsertOrIgnore = Handler([]string{"DatabaseRefusal"})
