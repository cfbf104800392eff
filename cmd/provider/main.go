// Command provider plays a webhook sender against cmd/receiver: it signs
// each attempt, counts only a 2xx as delivered, gives an attempt up after
// its timeout and retries on Svix's schedule (or a fast one for a
// workshop), honouring Retry-After and stopping on 410.
//
//	go run ./cmd/provider -id evt-1 -amount 500                 # one delivery
//	go run ./cmd/provider -id evt-1 -amount 500 -copies 20      # 20 at once; again: a fresh id
//	go run ./cmd/provider -source provider-b -id evt-1 -account 2 -amount 700
//	go run ./cmd/provider -id evt-1 -amount 700                 # a conflict: 422
//	go run ./cmd/provider -curl -id evt-2 -amount 300           # print a signed curl command
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"sync"
	"time"

	"idemlab/fleet"
	"idemlab/webhook"
)

// usageLine is the provider's synopsis.
const usageLine = "usage: go run ./cmd/provider [-id ID] [-amount N] [-copies N] [more flags]   (-h lists them)"

// flagsOnly refuses what the command line holds besides flags: flag
// parsing stops at the first word that is not a flag, so in
// "provider evt-2 -amount 300" every flag after evt-2 would be ignored.
func flagsOnly(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("takes flags only, not %q: the event is -id, its amount -amount", args)
	}
	return nil
}

func main() {
	url := flag.String("url", "http://"+fleet.ReceiverAddr, "the receiver's base `URL`")
	source := flag.String("source", "provider-a", "the `provider` to send as (its secret signs)")
	id := flag.String("id", "evt-1", "the event `id` (webhook-id)")
	account := flag.Int64("account", 1, "the `account` to credit")
	amount := flag.Int64("amount", 500, "the `amount` to credit")
	copies := flag.Int("copies", 1, "send `n` copies at once")
	fast := flag.Bool("fast", false, "retry after 1 s, 2 s, 4 s instead of Svix's schedule")
	timeout := flag.Duration("timeout", webhook.DefaultTimeout, "give an attempt up after `d`")
	curl := flag.Bool("curl", false, "print a signed curl command instead of sending")
	flag.Parse()
	if err := flagsOnly(flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "provider: %v\n%s\n", err, usageLine)
		os.Exit(2)
	}

	p, err := fleet.Provider(*url, *source)
	if err != nil {
		fmt.Fprintln(os.Stderr, "provider:", err)
		os.Exit(2)
	}
	body := fleet.Body(*account, *amount)
	if *curl {
		fmt.Println(fleet.Curl(p, *id, body))
		return
	}
	// A provider retries a receiver that is down for hours, silently: say
	// at once when there is nobody to send to.
	if err := reachable(*url); err != nil {
		fmt.Fprintf(os.Stderr, "provider: cannot connect to %s (%v): is go run ./cmd/receiver VARIANT running?\n", *url, err)
		os.Exit(1)
	}
	// A burst races copies of a new event. Copies of one the receiver has
	// applied already are all duplicates whatever the handler, so a burst
	// sent again with the same id could only ever look safe: it takes the
	// next id the receiver has not seen, and says so.
	if *copies > 1 {
		if st, err := fleet.ReadState(context.Background(), *url); err != nil {
			fmt.Fprintf(os.Stderr, "provider: cannot read %s/state (%v): sending %s as asked\n", *url, err, *id)
		} else if fresh := fleet.FreshID(st, *source, *id); fresh != *id {
			fmt.Printf("%s/%s is in the receiver's inbox already: its copies would all be duplicates and could not race;\n"+
				"sending the burst as %s/%s, an event it has not seen\n", *source, *id, *source, fresh)
			*id = fresh
		}
	}
	p.Timeout = *timeout
	if *fast {
		p.Schedule = []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second}
	}
	var wg sync.WaitGroup
	results := make([]webhook.Delivery, *copies)
	for i := range results {
		wg.Go(func() { results[i] = p.Send(context.Background(), *id, body) })
	}
	wg.Wait()
	failed := false
	for i, d := range results {
		fmt.Printf("%s/%s copy %d: delivered=%v", *source, *id, i+1, d.Delivered)
		for _, a := range d.Attempts {
			fmt.Printf("  %s", a)
		}
		fmt.Println()
		failed = failed || !d.Delivered
	}
	if failed {
		os.Exit(1)
	}
}

// reachable reports whether something listens at the URL's host and port.
func reachable(rawURL string) error {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	c, err := net.DialTimeout("tcp", host, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}
