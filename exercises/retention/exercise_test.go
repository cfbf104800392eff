package retention

import (
	"testing"

	"idemlab/exercises"
)

func TestExercise(t *testing.T) { exercises.Run(t, Check, Starting) }

// TestCrashChild is the process the Crash scenario kills.
func TestCrashChild(t *testing.T) { exercises.CrashChild(t, Starting.Variant()) }
