package insertorignore

import (
	"testing"

	"idemlab/exercises"
)

func TestExercise(t *testing.T) { exercises.Run(t, Check, Variant) }
