package newvariant

import (
	"testing"

	"idemlab/exercises"
)

func TestExercise(t *testing.T) {
	exercises.Run(t, Check, Work{Variant: Variant, Scenario: Scenario})
}

// TestCrashChild is the process the Crash scenario kills.
func TestCrashChild(t *testing.T) { exercises.CrashChild(t, Variant) }
