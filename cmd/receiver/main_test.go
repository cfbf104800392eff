package main

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRunPortBusy starts the receiver on a port already taken: the error
// says which flag picks another, and how to send to it then.
func TestRunPortBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = run("correct", ln.Addr().String(), filepath.Join(t.TempDir(), "demo.db"))
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "pick another with -addr") ||
		!strings.Contains(err.Error(), "-url") {
		t.Errorf("run(correct, %s), the port taken = %v, want address in use, the -addr that picks another and the provider's -url", ln.Addr(), err)
	}
}
