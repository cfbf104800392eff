package checks

// MarkFirst is the check of the markfirst exercise: the whole matrix held
// to the correct standard, the failures between the mark and the credit
// first.
var MarkFirst = Handler([]string{"Rollback", "FaultSweep", "Crash"})
