package main

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"idemlab/fleet"
)

// addrProblem says what is wrong with serving the page at page while the
// demo receiver listens at receiver: the page off localhost, or on the
// receiver's port (whatever the host is called, one port is one port).
func addrProblem(page, receiver string) error {
	host, port, err := net.SplitHostPort(page)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return errors.New("the page is not on localhost")
	}
	_, rport, err := net.SplitHostPort(receiver)
	if err != nil {
		return err
	}
	if port == rport {
		return errors.New("the page and the receiver share port " + port)
	}
	return nil
}

// TestWebAddr requires the page's default address to be on localhost and
// on another port than the receiver's, so that a workshop can run both.
func TestWebAddr(t *testing.T) {
	if err := addrProblem(webAddr, fleet.ReceiverAddr); err != nil {
		t.Errorf("addrProblem(%s, %s) = %v, want nil", webAddr, fleet.ReceiverAddr, err)
	}
	// The defaults the check must reject.
	for _, page := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "0.0.0.0:8090", ":8090"} {
		if addrProblem(page, "127.0.0.1:8080") == nil {
			t.Errorf("addrProblem(%s, 127.0.0.1:8080) = nil, want a clash or a page off localhost", page)
		}
	}
}

// TestWebPortBusy serves the page on a port already taken: the error says
// which flag picks another.
func TestWebPortBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = cmdWeb(io.Discard, io.Discard, ln.Addr().String(), "")
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "pick another with -addr") {
		t.Errorf("cmdWeb(-addr %s), the port taken = %v, want address in use and the flag that picks another", ln.Addr(), err)
	}
}
