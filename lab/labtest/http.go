package labtest

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"sync"

	"idemlab/lab"
)

// HTTP in the bubble. A scenario can serve a variant over real HTTP — an
// http.Server and an http.Client speaking HTTP/1.1 to each other — without
// a socket: the connections are net.Pipe pairs, which block on channels
// that the synctest bubble sees, so a client's timeout, a sender's retry
// schedule and the handler's lock waits all run on the bubble's fake clock,
// and a day of retries takes milliseconds. The testing/synctest
// documentation recommends this over loopback for the same reason.

// Processor returns the variant's handler as a lab.Processor whose every
// call is a delivery of this database, recorded and checked like Deliver's:
// for an HTTP receiver to call. The call's context is the caller's (the
// request's), so a client that disconnects cancels it. A call runs on the
// session its context names (see RunSessions), or on a new one.
func (db *DB) Processor() lab.Processor { return sessionProcessor{db} }

type sessionProcessor struct{ db *DB }

// sessionNames guards naming a new session from a request's goroutine.
var sessionNames sync.Mutex

func (p sessionProcessor) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	session := SessionOf(ctx)
	if session == "" {
		sessionNames.Lock()
		session = p.db.run.nextSession()
		sessionNames.Unlock()
	}
	a := p.db.deliverFrom(ctx, session, e, 0)
	return a.Outcome, a.Err
}

// RunSessions runs each body on a session of its own, all at once, and
// steps the sessions' statements round robin, as Concurrently does with
// events. A body delivers through HTTP: its context names its session, and
// a client whose transport is sessionTransport carries the name to a server
// whose handler is wrapped in SessionHandler, so that the handler's
// statements are the session's and the scheduler orders them. A body that
// waits between attempts (a sender's retry delay) counts as waiting until
// it sends again. It returns the answers the variant gave, in order.
func (db *DB) RunSessions(bodies ...func(ctx context.Context)) []Answer {
	sc := &scheduler{db: db}
	db.mu.Lock()
	db.sched = sc
	first := len(db.answers)
	db.mu.Unlock()
	defer func() {
		db.mu.Lock()
		db.sched = nil
		db.mu.Unlock()
	}()
	for _, body := range bodies {
		s := &session{name: db.run.nextSession(), release: make(chan struct{}, 1)}
		sc.mu.Lock()
		sc.sessions = append(sc.sessions, s)
		sc.mu.Unlock()
		go func() {
			body(withSession(context.Background(), s.name))
			sc.mu.Lock()
			s.done = true
			sc.mu.Unlock()
		}()
		sc.quiesce(false)
		sc.mu.Lock()
		s.waiting = s.parkedAt == nil && !s.done // on a Go lock (see quiet.go)
		sc.mu.Unlock()
	}
	decisions := sc.run(roundRobin)
	db.run.Transcript.Note("", "schedule: "+scheduleString(decisions), "")
	db.mu.Lock()
	defer db.mu.Unlock()
	return append([]Answer(nil), db.answers[first:]...)
}

// sessionHeader carries a session's name from a client to the server, in
// the lab only.
const sessionHeader = "Idemlab-Session"

// sessionTransport wraps base (nil: a Network's transport must be given) so
// that each request names the session of its context.
func sessionTransport(base http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if s := SessionOf(req.Context()); s != "" {
			req = req.Clone(req.Context())
			req.Header.Set(sessionHeader, s)
		}
		return base.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// SessionHandler wraps h so that a request naming a session runs on it.
// The header is removed before h sees the request.
func SessionHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := r.Header.Get(sessionHeader); s != "" {
			r.Header.Del(sessionHeader)
			r = r.WithContext(withSession(r.Context(), s))
		}
		h.ServeHTTP(w, r)
	})
}

// Network is an in-memory network of net.Pipe connections with one server
// on it. Its faults are the network's, not the database's: LoseResponses
// swallows what the server writes on the next connections.
type Network struct {
	srv    *http.Server
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	served chan struct{}

	mu   sync.Mutex
	lose int // connections whose responses vanish
}

// Serve starts an http.Server for h on a new in-memory network. Call it
// inside a synctest bubble, and Shutdown the network before the bubble ends.
func Serve(h http.Handler) *Network {
	n := &Network{conns: make(chan net.Conn), closed: make(chan struct{}), served: make(chan struct{})}
	n.srv = &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		n.srv.Serve(n)
		close(n.served)
	}()
	return n
}

// LoseResponses makes the server's answers on the next k connections
// vanish on the way back: the handler runs to the end and its response is
// written, but no byte reaches the client, which waits until its own
// timeout. It is the article's opening story: the handler credited the
// balance, and the answer got lost.
func (n *Network) LoseResponses(k int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lose = k
}

// Client returns a client of the network. Its transport carries sessions
// (sessionTransport).
func (n *Network) Client() *http.Client {
	return &http.Client{Transport: sessionTransport(&http.Transport{
		DialContext: n.dialContext,
		Proxy:       nil,
	})}
}

// dialContext connects to the server, whatever the address.
func (n *Network) dialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	n.mu.Lock()
	if n.lose > 0 {
		n.lose--
		server = blackHole{server}
	}
	n.mu.Unlock()
	select {
	case n.conns <- server:
		return client, nil
	case <-n.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept implements net.Listener for the server.
func (n *Network) Accept() (net.Conn, error) {
	select {
	case c := <-n.conns:
		return c, nil
	case <-n.closed:
		return nil, net.ErrClosed
	}
}

// Close stops accepting connections; it implements net.Listener, and the
// server calls it when it shuts down.
func (n *Network) Close() error {
	n.once.Do(func() { close(n.closed) })
	return nil
}

// Shutdown closes the server, its listener and every connection, and waits
// until the server has stopped.
func (n *Network) Shutdown() {
	n.srv.Close()
	<-n.served
}

// Addr implements net.Listener.
func (n *Network) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// blackHole is a connection whose writes succeed and go nowhere.
type blackHole struct{ net.Conn }

func (b blackHole) Write(p []byte) (int, error) { return len(p), nil }
