package sourcescope

import (
	"testing"

	"idemlab/exercises"
)

func TestExercise(t *testing.T) { exercises.Run(t, Check, Variant) }

// TestCrashChild is the process the Crash scenario kills.
func TestCrashChild(t *testing.T) { exercises.CrashChild(t, Variant) }
