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
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"idemlab/fleet"
)

func main() {
	opts, err := parseArgs(os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return
	case err != nil:
		os.Exit(2) // parseArgs has said what and printed the usage
	}
	if err := run(opts.name, opts.addr, opts.path); err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}

// usageLine is the receiver's synopsis.
const usageLine = "usage: go run ./cmd/receiver [-addr host:port] [-db file] [VARIANT]   (-h for more)"

// defaultDB is the database file's name in the temporary directory unless
// -db names another; docs/http.md names it (TestDocsNameTheDatabase).
const defaultDB = "idemlab-fleet.db"

// options are what the command line asks for: the variant to serve, where,
// and on which database file.
type options struct{ name, addr, path string }

// parseArgs reads the command line. Flags are honoured before or after the
// variant (receiver naive/checkthenact -addr 127.0.0.1:8081), the variant
// is correct unless one is named, and anything more is refused: a usage
// error is said in one line, then the usage line, on output.
func parseArgs(args []string, output io.Writer) (options, error) {
	fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
	fs.SetOutput(output)
	opts := options{name: "correct"}
	fs.StringVar(&opts.addr, "addr", fleet.ReceiverAddr, "`address` to listen on")
	fs.StringVar(&opts.path, "db", filepath.Join(os.TempDir(), defaultDB), "database `file`, created when missing")
	fs.Usage = func() {} // flag says the error itself; the usage is printed below
	var named []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(output, strings.TrimSuffix(usageLine, "   (-h for more)"))
			fs.PrintDefaults()
			return opts, err
		} else if err != nil {
			fmt.Fprintln(output, usageLine)
			return opts, err
		}
		if fs.NArg() == 0 {
			break
		}
		named, args = append(named, fs.Arg(0)), fs.Args()[1:]
	}
	switch len(named) {
	case 0:
	case 1:
		opts.name = named[0]
	default:
		err := fmt.Errorf("one variant at a time, not %d: %s", len(named), strings.Join(named, " "))
		fmt.Fprintf(output, "receiver: %v\n%s\n", err, usageLine)
		return opts, err
	}
	return opts, nil
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
