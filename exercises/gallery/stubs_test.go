package gallery_test

import (
	"idemlab/correct"
	"idemlab/exercises/memory"
	"idemlab/lab"
)

// memoryVariants are the memory exercise's handlers as the Crash scenario's
// child process finds them, by name. Every DSN the memory check is given
// makes a variant of the same name, so the child runs the correct DSN: a
// crash child only opens the file the parent made and delivers one event,
// which none of the pragmas the wrong DSNs drop can change.
func memoryVariants() []lab.Variant { return []lab.Variant{memory.Variant(correct.DSN)} }

// limitVariants are the wrong fixes of the limit exercises whose checks run
// the matrix.
func limitVariants() []lab.Variant {
	var vs []lab.Variant
	for _, w := range replayFixes {
		vs = append(vs, replayService(w.name, w.fix).Variant())
	}
	for _, w := range outboxFixes {
		vs = append(vs, w.service().Handler())
	}
	return vs
}
