package variants_test

import (
	"os"
	"slices"
	"testing"

	"idemlab/variants"
)

// TestEquivalentsAreThePackages requires variants.Equivalents to hold every
// package of ../equivalent, once: a handler left out would never be run
// through the matrix, nor asked whether a student's scenario holds on it.
func TestEquivalentsAreThePackages(t *testing.T) {
	dirs, err := os.ReadDir("../equivalent")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, d := range dirs {
		if d.IsDir() {
			want = append(want, "equivalent/"+d.Name())
		}
	}
	for _, v := range variants.Equivalents {
		got = append(got, v.Name)
	}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("variants.Equivalents = %v, want the packages of ../equivalent, %v", got, want)
	}
}
