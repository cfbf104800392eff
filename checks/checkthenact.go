package checks

// CheckThenAct is the check of the checkthenact exercise: the whole matrix
// held to the correct standard, the races and faults first.
var CheckThenAct = Handler([]string{"Race", "ConflictRace", "Concurrent", "FaultSweep"})
