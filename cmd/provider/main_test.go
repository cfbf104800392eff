package main

import (
	"strings"
	"testing"
)

// TestFlagsOnly: a word that is not a flag is refused, naming it, so that
// the flags after it are not silently ignored.
func TestFlagsOnly(t *testing.T) {
	if err := flagsOnly(nil); err != nil {
		t.Errorf("flagsOnly(none) = %v, want nil", err)
	}
	args := []string{"evt-2", "-amount", "300"}
	if err := flagsOnly(args); err == nil || !strings.Contains(err.Error(), `"evt-2" "-amount" "300"`) || !strings.Contains(err.Error(), "-id") {
		t.Errorf("flagsOnly(%q) = %v, want the words refused and -id named", args, err)
	}
}
