// Command receiver serves one variant of the kit as a webhook endpoint on
// a real TCP socket, for a workshop to fire requests at:
//
//	go run ./cmd/receiver naive/checkthenact
//	go run ./cmd/receiver -addr 127.0.0.1:8080 -db /tmp/fleet.db correct
//
// Each provider of the demo has its own endpoint, POST
// /webhooks/provider-a and /webhooks/provider-b, which verifies that
// provider's Standard Webhooks signature; GET /state shows the balances
// and the inbox, and says in words whether each balance equals the sum of
// its inbox rows. The database file survives restarts: delete it to start
// over with accounts 1, 2 and 3 at 0. Send with cmd/provider, or with curl
// (go run ./cmd/provider -curl prints a signed command).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"

	"idemlab/fleet"
)

func main() {
	addr := flag.String("addr", fleet.ReceiverAddr, "`address` to listen on")
	path := flag.String("db", filepath.Join(os.TempDir(), "idemlab-fleet.db"), "database `file`, created when missing")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: receiver [-addr host:port] [-db file] VARIANT\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	name := "correct"
	if flag.NArg() > 0 {
		name = flag.Arg(0)
	}
	if err := run(name, *addr, *path); err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}

func run(name, addr, path string) error {
	v, err := fleet.Variant(name)
	if err != nil {
		return err
	}
	s, err := fleet.Open(v, path)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w\nanother server on that port? pick another with -addr host:port\n"+
			"and send to it with go run ./cmd/provider -url http://host:port", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	base := "http://" + ln.Addr().String()
	slog.Info("serving "+v.Name, "db", path)
	slog.Info("webhooks at " + base + "/webhooks/{provider-a,provider-b}")
	slog.Info("balances and inbox at " + base + "/state")
	return s.Serve(ctx, ln)
}
