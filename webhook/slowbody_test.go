package webhook_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/lab"
	"idemlab/webhook"
)

// pipeListener is a net.Listener whose connections are net.Pipe pairs: an
// http.Server on it runs inside a synctest bubble, where the server's read
// deadlines and a client's pauses take fake time.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial returns the client's end of a new connection to the server.
func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// slow is a processor that takes 8 s, longer than DefaultBodyTimeout, and
// answers busy if its context ends first.
type slow struct{ stub }

func (s *slow) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	select {
	case <-time.After(8 * time.Second):
		return s.stub.Process(ctx, e)
	case <-ctx.Done():
		return 0, lab.Classify(ctx.Err())
	}
}

// TestSlowBodyRefused sends a signed delivery whose body comes one byte a
// second, 28 s from the first byte to the last, to a receiver behind an
// http.Server configured as cmd/receiver's and the fleet's are
// (ReadHeaderTimeout only, which stops counting once the headers are in).
// The receiver gives the body BodyTimeout to arrive and answers 408
// Request Timeout when it does not (RFC 9110 §15.5.9), closing the
// connection, without running the processor. A whole body sent at once is
// applied, and so is one whose processor takes longer than BodyTimeout:
// the deadline ends with the body, not with the answer.
func TestSlowBodyRefused(t *testing.T) {
	for _, c := range []struct {
		name    string
		trickle bool // a byte a second
		slow    bool // the processor takes 8 s
		status  int
	}{
		{"a byte a second", true, false, http.StatusRequestTimeout},
		{"all at once", false, false, http.StatusOK},
		{"all at once, processed in 8 s", false, true, http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &slow{stub: stub{outcome: lab.Applied}}
				var proc lab.Processor = &p.stub
				if c.slow {
					proc = p
				}
				rc := webhook.NewReceiver(proc, endpointA())
				rc.Log = slog.New(slog.DiscardHandler)
				ln := newPipeListener()
				srv := &http.Server{Handler: rc, ReadHeaderTimeout: 5 * time.Second}
				go srv.Serve(ln)
				defer srv.Close()

				conn := ln.dial()
				req := signed("evt-1", okBody, secretA)
				head := fmt.Sprintf("POST /webhooks/provider-a HTTP/1.1\r\nHost: receiver.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", len(okBody))
				for _, k := range []string{webhook.HeaderID, webhook.HeaderTimestamp, webhook.HeaderSignature} {
					head += k + ": " + req.Header.Get(k) + "\r\n"
				}
				start := time.Now()
				sent := make(chan struct{})
				go func() {
					defer close(sent)
					if _, err := conn.Write([]byte(head + "\r\n")); err != nil {
						return
					}
					if !c.trickle {
						conn.Write([]byte(okBody))
						return
					}
					for i := range len(okBody) {
						if i > 0 {
							time.Sleep(time.Second) // the sender's pace, on the bubble's clock
						}
						if _, err := conn.Write([]byte{okBody[i]}); err != nil {
							return // the server hung up
						}
					}
				}()
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				took := time.Since(start)
				conn.Close() // a write the server no longer reads fails now
				<-sent
				if err != nil {
					t.Fatalf("reading the answer: %v", err)
				}
				resp.Body.Close()
				calls := p.called()
				switch {
				case resp.StatusCode != c.status:
					t.Errorf("POST of a %d-byte body, %s: status %d after %v, Process calls %v; want %d",
						len(okBody), c.name, resp.StatusCode, took, calls, c.status)
				case c.trickle && len(calls) != 0:
					t.Errorf("POST of a body, %s: Process calls %v, want never", c.name, calls)
				case c.trickle && took > webhook.DefaultBodyTimeout:
					t.Errorf("POST of a body, %s: answered after %v, want within DefaultBodyTimeout (%v)", c.name, took, webhook.DefaultBodyTimeout)
				case c.trickle && !resp.Close:
					t.Errorf("POST of a body, %s: the answer keeps the connection, want Connection: close (the rest of the body is unread)", c.name)
				case !c.trickle && len(calls) != 1:
					t.Errorf("POST of a body, %s: Process calls %v, want one", c.name, calls)
				}
			})
		})
	}
}
