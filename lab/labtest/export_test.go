package labtest

import "time"

// SetCellStuckAfter makes the watchdog stop a cell after d without a
// statement, for tests of the watchdog itself, and returns the function
// that restores the default.
func SetCellStuckAfter(d time.Duration) (restore func()) {
	was := cellStuckAfter
	cellStuckAfter = d
	return func() { cellStuckAfter = was }
}
