package newvariant

import (
	"testing"

	"idemlab/exercises"
)

func TestExercise(t *testing.T) {
	exercises.Run(t, Check, Work{Variant: Variant, Scenario: Scenario})
}
