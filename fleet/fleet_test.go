package fleet_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"idemlab/correct"
	"idemlab/fleet"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/webhook"
)

// The burst: Events distinct events, each sent Copies times, every copy to
// another receiver, at most InFlight deliveries at once.
const (
	Receivers = 3
	Workers   = 3
	Events    = 300
	Copies    = 3
	InFlight  = 48
	// Bound is how long a whole test may take before it gives up.
	Bound = 2 * time.Minute
)

// Environment of a child process: its role, its database and the
// isolation level of its transactions.
const (
	envRole  = "IDEMLAB_FLEET_ROLE"
	envDB    = "IDEMLAB_FLEET_DB"
	envLevel = "IDEMLAB_FLEET_LEVEL"
	envDie   = "IDEMLAB_FLEET_DIE_AFTER" // an event id: see fleet.Child
)

// TestChild is a process of the fleet: it does nothing unless a test of
// this file started it, with its role in the environment.
func TestChild(t *testing.T) {
	role := os.Getenv(envRole)
	if role == "" {
		t.Skip("runs only as a process the fleet tests start")
	}
	if err := fleet.Child(role, os.Getenv(envDB), lab.Isolation(os.Getenv(envLevel)), os.Getenv(envDie), os.Stdin, os.Stdout); err != nil {
		t.Fatalf("%s: %v", role, err)
	}
}

// TestProcesses starts Receivers receiver processes, each applying credits
// inline with its own pool on one PostgreSQL inbox, and sends every event
// to all of them at once. It runs at each isolation level: at REPEATABLE
// READ and SERIALIZABLE two deliveries that credit one account at once
// meet as a serialization failure (40001), which correct's retry runs
// again and, when the deadline leaves no time for another attempt,
// answers busy for the sender to retry. After the 300th request it kills receiver 0 with
// SIGKILL and starts it again, after the 600th receiver 1; the provider
// retries what got no answer. Besides, receiver 2 kills itself with
// SIGKILL right after the COMMIT that applies one more event, sent to it
// alone mid-burst, and before it answers (see burst.dying): the sender
// must see no answer, and its redelivery, to the restarted receiver, must
// be a duplicate. Every delivery must end delivered, with exactly one
// inbox row and one credit per event, and no event answered "applied"
// twice.
func TestProcesses(t *testing.T) {
	for _, level := range lab.Isolations {
		t.Run(string(level), func(t *testing.T) {
			b := newBurst(t, fleet.RoleInline, level, 0)
			b.killAt(Events*Copies/3, "receiver", 0)
			b.killAt(2*Events*Copies/3, "receiver", 1)
			b.run()
		})
	}
}

// TestQueue is TestProcesses in the "acknowledge fast, process later"
// shape: the receivers accept each event with its inbox row and a job,
// Workers worker processes claim the jobs with FOR UPDATE SKIP LOCKED.
// Receivers 0 and 1 are killed as in TestProcesses, workers 0 and 2 after
// the 450th and 750th requests, and receiver 2 kills itself after the
// COMMIT that accepts the extra event, as in TestProcesses. When the burst is over, the workers are
// told to finish: each stops once no job is left, and every event must
// then be credited once. It runs at each isolation level, as
// TestProcesses does; a worker whose claim or credit fails with 40001
// leaves the job for the next claim.
func TestQueue(t *testing.T) {
	for _, level := range lab.Isolations {
		t.Run(string(level), func(t *testing.T) {
			b := newBurst(t, fleet.RoleEnqueuer, level, Workers)
			b.killAt(Events*Copies/3, "receiver", 0)
			b.killAt(Events*Copies/2, "worker", 0)
			b.killAt(2*Events*Copies/3, "receiver", 1)
			b.killAt(5*Events*Copies/6, "worker", 2)
			b.run()
		})
	}
}

// burst is one test's fleet, database and deliveries.
type burst struct {
	t *testing.T
	// urls are where the database is: receiver i's pool connects to
	// urls[i%len(urls)] (on a Galera cluster, one node each), a worker's
	// to urls[0].
	urls      []string
	db        *sql.DB // the parent's own, for setup and counting
	role      string
	level     lab.Isolation // of every child's transactions
	receivers []*process
	workers   []*process
	addrs     []atomic.Pointer[string] // where receiver i listens now
	mu        sync.Mutex               // guards receivers and workers
	kills     map[int64]kill           // by request number
	killed    sync.WaitGroup
	requests  atomic.Int64
	// The receiver that dies after a COMMIT: the one that gets the extra
	// event, and what became of it (nil once it died by SIGKILL and
	// another took its place).
	dying   int
	revived chan error
	over    chan struct{} // closed once the burst is over
	// schedule is the provider's retry schedule; nil means every 20 ms
	// for 10 s.
	schedule []time.Duration
	// inboxQuery counts the inbox's rows, and those stored as they were
	// sent, in the database's dialect.
	inboxQuery string
	// restartNode, on a cluster, kills database node i with SIGKILL and
	// starts it again (a kill of kind "node").
	restartNode func(i int) error
	// aborts, when set, is asked of each receiver alive at the end (see
	// fleet.Aborts).
	aborts bool
}

// pgInbox is inboxQuery on PostgreSQL: event e's row is account 1 + e%3
// and amount 1 + e.
const pgInbox = `SELECT count(*), count(*) FILTER (WHERE account_id = 1 + (substr(event_id, 5)::int % 3) AND amount = 1 + substr(event_id, 5)::int)
		FROM inbox`

// extra is the event sent, once and only to receiver b.dying, in the
// middle of the burst: the one after whose COMMIT that receiver dies.
const extra = Events

// kill is a SIGKILL and restart of one process, due at a request number.
type kill struct {
	kind string // "receiver", "worker", or "node" (a database server of a cluster)
	i    int
}

// newBurst creates the database, its tables and accounts 1 to 3, and
// starts the receivers in role and the workers, at isolation level.
func newBurst(t *testing.T, role string, level lab.Isolation, workers int) *burst {
	srv := labtest.NeedPostgres(t)
	b := &burst{t: t, urls: []string{srv.URL()}, role: role, level: level, addrs: make([]atomic.Pointer[string], Receivers), kills: map[int64]kill{},
		dying: Receivers - 1, revived: make(chan error, 1), over: make(chan struct{}), inboxQuery: pgInbox}
	var err error
	b.db, err = sql.Open("pgx", srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.db.Close() })
	schema := correct.PostgresSchema
	if role == fleet.RoleEnqueuer {
		schema += fleet.QueueSchema
	}
	if _, err := b.db.Exec(schema + `INSERT INTO accounts (id, balance) VALUES (1, 0), (2, 0), (3, 0);`); err != nil {
		t.Fatalf("creating the tables: %v", err)
	}
	b.startAll(workers)
	return b
}

// startAll starts the receivers in b.role and the workers. Killing them
// is the last cleanup to run, before the database is dropped.
func (b *burst) startAll(workers int) {
	t := b.t
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range append(b.receivers, b.workers...) {
			p.kill()
		}
	})
	for i := range Receivers {
		var env []string
		if i == b.dying {
			env = []string{envDie + "=" + eventID(extra)}
		}
		p, err := b.start(b.role, i, env...)
		if err != nil {
			t.Fatal(err)
		}
		b.receivers = append(b.receivers, p)
		b.addrs[i].Store(&p.addr)
		if i == b.dying {
			go b.revive(i, p)
		}
	}
	for i := range workers {
		p, err := b.start(fleet.RoleWorker, i)
		if err != nil {
			t.Fatal(err)
		}
		b.workers = append(b.workers, p)
	}
}

// revive waits for receiver i, process p, to die on its own after the
// COMMIT of the extra event, and starts another in its place; it sends on
// b.revived how that went. A receiver still alive when the burst is over
// was never revived, and run reports that.
func (b *burst) revive(i int, p *process) {
	select {
	case <-p.exited:
	case <-b.over:
		return
	}
	if !isKilled(p.err) {
		b.revived <- fmt.Errorf("receiver %d exited with %v, not SIGKILL\n%s", i, p.err, p.stderr.String())
		return
	}
	np, err := b.start(b.role, i)
	if err != nil {
		b.revived <- fmt.Errorf("restarting receiver %d: %v", i, err)
		return
	}
	b.mu.Lock()
	b.receivers[i] = np
	b.mu.Unlock()
	b.addrs[i].Store(&np.addr)
	b.revived <- nil
}

// lostAnswer checks that delivery d is one whose receiver died between
// COMMIT and its answer: the first attempt that was not answered busy got
// no answer, and the last was a duplicate (2xx, replayed), so the event was
// committed before the death. Busy attempts before it committed nothing
// (at REPEATABLE READ and SERIALIZABLE a delivery whose retries of 40001
// run out answers 503), so the receiver had no COMMIT to die after.
// TestLostAnswer holds it to the deliveries it must refuse.
func lostAnswer(d webhook.Delivery) error {
	if len(d.Attempts) == 0 {
		return fmt.Errorf("never sent")
	}
	first := d.Attempts[0]
	for _, a := range d.Attempts {
		if first = a; a.Status != http.StatusServiceUnavailable {
			break
		}
	}
	if first.Status != 0 {
		return fmt.Errorf("first attempt not answered busy %v, want no answer: the receiver did not die between COMMIT and its answer", first)
	}
	if final := d.Last(); !final.OK() || !final.Replayed {
		return fmt.Errorf("%v, want no answer, then a duplicate (2xx replayed): the redelivery did not find it committed", d.Attempts)
	}
	return nil
}

// TestLostAnswer holds lostAnswer to the deliveries that a crash in the
// wrong place, or none, would produce.
func TestLostAnswer(t *testing.T) {
	lost := webhook.Attempt{N: 1, Err: io.EOF}
	for _, c := range []struct {
		name     string
		attempts []webhook.Attempt
		ok       bool
	}{
		{"died after COMMIT, before the answer", []webhook.Attempt{lost, {N: 2, Status: 200, Replayed: true}}, true},
		{"busy, then died after COMMIT", []webhook.Attempt{{N: 1, Status: 503}, {N: 2, Err: io.EOF}, {N: 3, Status: 200, Replayed: true}}, true},
		{"busy, then answered: never died", []webhook.Attempt{{N: 1, Status: 503}, {N: 2, Status: 200}, {N: 3, Status: 200, Replayed: true}}, false},
		{"never died", []webhook.Attempt{{N: 1, Status: 200}}, false},
		{"died before COMMIT: the redelivery applies", []webhook.Attempt{lost, {N: 2, Status: 200}}, false},
		{"died after answering", []webhook.Attempt{{N: 1, Status: 200}, {N: 2, Status: 200, Replayed: true}}, false},
		{"never came back", []webhook.Attempt{lost, {N: 2, Err: io.EOF}}, false},
		{"never sent", nil, false},
	} {
		err := lostAnswer(webhook.Delivery{Attempts: c.attempts})
		if (err == nil) != c.ok {
			t.Errorf("lostAnswer(%s: %v) = %v, want ok %v", c.name, c.attempts, err, c.ok)
		}
	}
}

// appliedTwice returns a line for each event that more than one delivery
// got "applied" (200, not replayed) for; the deliveries of event e are
// deliveries[e*Copies:(e+1)*Copies]. A delivery stops at its first 2xx,
// so each counts once at most. TestAppliedTwice holds it to the answers
// it must catch.
func appliedTwice(deliveries []webhook.Delivery) []string {
	var problems []string
	for e := 0; e*Copies < len(deliveries); e++ {
		var copies []int
		for c, d := range deliveries[e*Copies : min((e+1)*Copies, len(deliveries))] {
			if slices.ContainsFunc(d.Attempts, func(a webhook.Attempt) bool { return a.OK() && !a.Replayed }) {
				copies = append(copies, c)
			}
		}
		if len(copies) > 1 {
			problems = append(problems, fmt.Sprintf("%s: copies %v each answered applied (200, not replayed), want one at most", eventID(e), copies))
		}
	}
	return problems
}

// TestAppliedTwice holds appliedTwice to the event it must name: two of
// its copies answered applied, however many attempts each took; one
// applied and the others replayed, busy or unanswered is the right story.
func TestAppliedTwice(t *testing.T) {
	applied := webhook.Delivery{Attempts: []webhook.Attempt{{N: 1, Status: 200}}}
	late := webhook.Delivery{Attempts: []webhook.Attempt{{N: 1, Status: 503}, {N: 2, Err: io.EOF}, {N: 3, Status: 200}}}
	replayed := webhook.Delivery{Attempts: []webhook.Attempt{{N: 1, Status: 503}, {N: 2, Status: 200, Replayed: true}}}
	ds := make([]webhook.Delivery, 2*Copies)
	ds[0], ds[1] = applied, replayed // event 0: right
	ds[Copies], ds[Copies+2] = replayed, applied
	ds[Copies+1] = late // event 1: applied twice
	got := appliedTwice(ds)
	if len(got) != 1 || !strings.HasPrefix(got[0], eventID(1)+": copies [1 2]") {
		t.Errorf("appliedTwice(evt-000 applied once, evt-001 applied by copies 1 and 2) = %q, want one line for evt-001, copies [1 2]", got)
	}
}

// eventID is event e's id.
func eventID(e int) string { return fmt.Sprintf("evt-%03d", e) }

// killAt kills the kind's process i with SIGKILL when the n-th request is
// sent, and starts another in its place.
func (b *burst) killAt(n int, kind string, i int) {
	b.kills[int64(n)] = kill{kind, i}
}

// run sends the burst, waits for the kills, stops the workers, and checks
// the database.
func (b *burst) run() {
	t := b.t
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	defer cancel()
	key, err := webhook.ParseSecret(fleet.Secret)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &countingTransport{b: b, base: &http.Transport{
		DialContext:         b.dial,
		MaxIdleConnsPerHost: InFlight,
	}}}
	// Retries come every 20 ms for 10 s, Retry-After included: a
	// killed receiver is back within half a second here, and the bound
	// leaves room for a loaded machine.
	schedule := b.schedule
	if schedule == nil {
		schedule = every20ms(500)
	}
	providers := make([]*webhook.Provider, Receivers)
	for i := range providers {
		providers[i] = &webhook.Provider{
			URL:           fmt.Sprintf("http://receiver-%d/webhooks/%s", i, fleet.Source),
			Secrets:       []webhook.Secret{key},
			Client:        client,
			Schedule:      schedule,
			Timeout:       15 * time.Second,
			MaxRetryAfter: 20 * time.Millisecond,
		}
	}

	start := time.Now()
	deliveries := make([]webhook.Delivery, Events*Copies)
	sem := make(chan struct{}, InFlight)
	var wg sync.WaitGroup
	var last webhook.Delivery // the extra event's
	for e := range Events {
		if e == Events/2 {
			wg.Go(func() {
				body := fmt.Appendf(nil, `{"account_id":%d,"amount":%d}`, account(extra), amount(extra))
				last = providers[b.dying].Send(ctx, eventID(extra), body)
			})
		}
		id := eventID(e)
		body := fmt.Appendf(nil, `{"account_id":%d,"amount":%d}`, account(e), amount(e))
		for c := range Copies {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				deliveries[e*Copies+c] = providers[(e+c)%Receivers].Send(ctx, id, body)
			})
		}
	}
	wg.Wait()
	sent := time.Since(start)
	b.killed.Wait()
	close(b.over)

	// The kill between COMMIT and the answer: the extra event's first
	// attempt got no answer, its receiver died by SIGKILL and was
	// replaced, and the redelivery found the event committed.
	if err := lostAnswer(last); err != nil {
		t.Errorf("%s to receiver %d: %v", eventID(extra), b.dying, err)
	} else if err := <-b.revived; err != nil {
		t.Error(err)
	}

	// The workers finish what is left and stop; a receiver stops too.
	b.mu.Lock()
	for _, p := range b.workers {
		if err := p.stop(); err != nil {
			t.Errorf("worker: %v\n%s", err, p.stderr.String())
		}
	}
	b.mu.Unlock()
	drained := time.Since(start)

	// Count.
	var attempts, noAnswer, applied, replayed, busy, other int
	for i, d := range deliveries {
		attempts += len(d.Attempts)
		for _, a := range d.Attempts {
			switch {
			case a.Status == 0:
				noAnswer++
			case a.Status == http.StatusServiceUnavailable:
				busy++
			case a.OK() && a.Replayed:
				replayed++
			case a.OK():
				applied++
			default:
				other++
			}
		}
		if !d.Delivered {
			t.Errorf("evt-%03d copy %d to receiver %d: not delivered: %v", i/Copies, i%Copies, (i/Copies+i%Copies)%Receivers, d.Attempts)
		}
	}
	// A delivery stops at its first 2xx; an applied answer can be lost
	// with its receiver, never made twice.
	if applied+replayed != Events*Copies {
		t.Errorf("%d answers 2xx, want one per delivery, %d", applied+replayed, Events*Copies)
	}
	if applied > Events {
		t.Errorf("%d deliveries answered applied (200, not replayed), more than the %d events", applied, Events)
	}
	for _, problem := range appliedTwice(deliveries) {
		t.Error(problem)
	}
	want := map[int64]int64{}
	for e := range Events + 1 { // the burst's and the extra one
		want[account(e)] += amount(e)
	}
	got := map[int64]int64{}
	rows, err := b.db.Query(`SELECT id, balance FROM accounts`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, bal int64
		if err := rows.Scan(&id, &bal); err != nil {
			t.Fatal(err)
		}
		got[id] = bal
	}
	rows.Close()
	for id, w := range want {
		if got[id] != w {
			t.Errorf("account %d: balance %d, want %d, the sum of its distinct events (%+d)", id, got[id], w, got[id]-w)
		}
	}
	var inbox, right int
	if err := b.db.QueryRow(b.inboxQuery).Scan(&inbox, &right); err != nil {
		t.Fatal(err)
	}
	if inbox != Events+1 || right != Events+1 {
		t.Errorf("inbox: %d rows, %d of them as sent; want %d", inbox, right, Events+1)
	}
	for _, problem := range missingFromInbox(deliveries, b.inboxIDs()) {
		t.Error(problem)
	}
	if b.role == fleet.RoleEnqueuer {
		var jobs int
		if err := b.db.QueryRow(`SELECT count(*) FROM jobs`).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		if jobs != 0 {
			t.Errorf("%d jobs left after every worker finished", jobs)
		}
	}
	t.Logf("%d events × %d copies to %d receivers (%s, %s), %d workers, %d kills: %d requests, %d without an answer, %d busy, %d other errors, %d applied, %d replayed; burst %v, drained %v",
		Events, Copies, Receivers, b.role, b.level, len(b.workers), len(b.kills), attempts, noAnswer, busy, other, applied, replayed,
		sent.Round(time.Millisecond), drained.Round(time.Millisecond))
	t.Logf("and %s to receiver %d alone, which died by SIGKILL after its COMMIT: %v; %d attempts, the last %v",
		eventID(extra), b.dying, last.Attempts[0], len(last.Attempts), last.Last())
	if b.aborts {
		b.logAborts()
	}
}

// every20ms is a retry schedule: the first attempt at once, then n-1
// more, 20 ms apart.
func every20ms(n int) []time.Duration {
	schedule := make([]time.Duration, n)
	for i := 1; i < len(schedule); i++ {
		schedule[i] = 20 * time.Millisecond
	}
	return schedule
}

// inboxIDs returns the event ids in the inbox.
func (b *burst) inboxIDs() map[string]bool {
	rows, err := b.db.Query(`SELECT event_id FROM inbox`)
	if err != nil {
		b.t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			b.t.Fatal(err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		b.t.Fatal(err)
	}
	return ids
}

// missingFromInbox returns a line for each event some delivery of which
// was answered 2xx, applied or duplicate, though the inbox has no row for
// it: the sender stopped retrying an event that was never kept. The
// deliveries of event e are deliveries[e*Copies:(e+1)*Copies].
// TestMissingFromInbox holds it to the answer it must catch.
func missingFromInbox(deliveries []webhook.Delivery, inbox map[string]bool) []string {
	var problems []string
	for i, d := range deliveries {
		if d.Delivered && !inbox[eventID(i/Copies)] {
			problems = append(problems, fmt.Sprintf("%s copy %d: answered %v, and the inbox has no row for it", eventID(i/Copies), i%Copies, d.Last()))
		}
	}
	return problems
}

// TestMissingFromInbox holds missingFromInbox to the event it must name:
// one answered 2xx (applied or replayed) whose row is not in the inbox;
// one delivered and kept, and one never delivered, are right.
func TestMissingFromInbox(t *testing.T) {
	ok := webhook.Delivery{Delivered: true, Attempts: []webhook.Attempt{{N: 1, Status: 200}}}
	replayed := webhook.Delivery{Delivered: true, Attempts: []webhook.Attempt{{N: 1, Status: 200, Replayed: true}}}
	failed := webhook.Delivery{Attempts: []webhook.Attempt{{N: 1, Status: 500}}}
	ds := make([]webhook.Delivery, 3*Copies)
	ds[0] = ok              // event 0, kept
	ds[Copies+1] = replayed // event 1, missing: caught
	ds[2*Copies] = failed   // event 2, missing, never answered 2xx
	got := missingFromInbox(ds, map[string]bool{eventID(0): true})
	if len(got) != 1 || !strings.HasPrefix(got[0], eventID(1)+" copy 1:") {
		t.Errorf("missingFromInbox(evt-000 kept, evt-001 replayed and missing, evt-002 never delivered) = %q, want one line for evt-001 copy 1", got)
	}
}

// logAborts asks each receiver alive at the end how many 1213s its
// pool met, at COMMIT and at other statements (fleet.Aborts), and fails
// the test if none met one at COMMIT: the burst then did not show what
// it is for.
func (b *burst) logAborts() {
	b.mu.Lock()
	defer b.mu.Unlock()
	var lines []string
	var atCommit int64
	for i, p := range b.receivers {
		resp, err := http.Get("http://" + p.addr + "/aborts")
		if err != nil {
			b.t.Errorf("receiver %d: GET /aborts: %v", i, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.t.Errorf("receiver %d: GET /aborts: %v", i, err)
			continue
		}
		var commit, statement int64
		if _, err := fmt.Sscanf(string(body), "commit %d statement %d", &commit, &statement); err != nil {
			b.t.Errorf("receiver %d: GET /aborts = %q: %v", i, body, err)
		}
		atCommit += commit
		lines = append(lines, fmt.Sprintf("receiver %d: %d at COMMIT, %d at another statement", i, commit, statement))
	}
	b.t.Logf("1213s met by the receivers' pools since they last started, each run again by correct's retry: %s", strings.Join(lines, "; "))
	if atCommit == 0 {
		b.t.Errorf("no receiver met a 1213 at COMMIT: the burst showed no certification failure")
	}
}

// account and amount are event e's: distinct amounts, so that a balance
// off by any one credit shows.
func account(e int) int64 { return 1 + int64(e%3) }
func amount(e int) int64  { return 1 + int64(e) }

// dial connects to the receiver a URL's host names, wherever it listens
// now: a restarted receiver has a new port.
func (b *burst) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var i int
	if _, err := fmt.Sscanf(host, "receiver-%d:80", &i); err != nil || i < 0 || i >= Receivers {
		return nil, fmt.Errorf("no receiver %q", host)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, *b.addrs[i].Load())
}

// countingTransport numbers the requests and sets off the kills due.
type countingTransport struct {
	b    *burst
	base http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	n := c.b.requests.Add(1)
	if k, ok := c.b.kills[n]; ok {
		c.b.killed.Go(func() { c.b.restart(k) })
	}
	return c.base.RoundTrip(r)
}

// restart kills k's process with SIGKILL, waits for it to exit, and starts
// another in its place, which serves before restart returns.
func (b *burst) restart(k kill) {
	if k.kind == "node" {
		if err := b.restartNode(k.i); err != nil {
			b.t.Errorf("node %d: %v", k.i+1, err)
		}
		return
	}
	b.mu.Lock()
	list := b.receivers
	if k.kind == "worker" {
		list = b.workers
	}
	old := list[k.i]
	b.mu.Unlock()
	if err := old.kill(); !isKilled(err) {
		b.t.Errorf("%s %d: killed, it exited with %v, not SIGKILL: it was not running\n%s", k.kind, k.i, err, old.stderr.String())
	}
	role := b.role
	if k.kind == "worker" {
		role = fleet.RoleWorker
	}
	p, err := b.start(role, k.i)
	if err != nil {
		b.t.Errorf("restarting %s %d: %v", k.kind, k.i, err)
		return
	}
	b.mu.Lock()
	list[k.i] = p
	b.mu.Unlock()
	if k.kind == "receiver" {
		b.addrs[k.i].Store(&p.addr)
	}
}

// isKilled reports whether a process's exit error is death by SIGKILL.
func isKilled(err error) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// process is one child: this test binary, running TestChild.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
	addr   string        // a receiver's
	exited chan struct{} // closed when it has exited and err is set
	err    error
}

// start starts a process in role, receiver or worker i, and waits until
// it serves: for a receiver, until it has said where it listens and
// answered GET /ready. Its -test.timeout bounds the wait should it never
// get there.
func (b *burst) start(role string, i int, env ...string) (*process, error) {
	ready := make(chan string, 1)
	p := &process{stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1", "-test.timeout="+Bound.String())
	url := b.urls[0]
	if role != fleet.RoleWorker {
		url = b.urls[i%len(b.urls)]
	}
	p.cmd.Env = append(append(os.Environ(), envRole+"="+role, envDB+"="+url, envLevel+"="+string(b.level)), env...)
	p.cmd.Stdout = &firstLine{line: ready}
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	var said string
	select {
	case said = <-ready:
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before it served: %v\n%s", role, p.err, p.stderr.String())
	}
	line, _, _ := strings.Cut(said, "\n")
	if !strings.HasPrefix(line, fleet.ReadyPrefix) {
		p.kill()
		return nil, fmt.Errorf("%s said %q, not %q:\n%s", role, line, fleet.ReadyPrefix, said)
	}
	if role == fleet.RoleWorker {
		return p, nil
	}
	p.addr = strings.TrimSpace(strings.TrimPrefix(line, fleet.ReadyPrefix))
	resp, err := http.Get("http://" + p.addr + "/ready")
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("%s at %s: %v", role, p.addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		p.kill()
		return nil, fmt.Errorf("%s at %s: GET /ready answered %d", role, p.addr, resp.StatusCode)
	}
	return p, nil
}

// kill sends SIGKILL and returns how the process exited.
func (p *process) kill() error {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	return p.err
}

// stop closes the process's input, which tells it to finish, and returns
// how it exited.
func (p *process) stop() error {
	p.stdin.Close()
	<-p.exited
	return p.err
}

// firstLine sends what was written to it by the time a whole line was
// (the first line, and with it the rest of that write, which holds a
// failing child's message), and swallows the rest.
type firstLine struct {
	buf  []byte
	line chan<- string
	sent bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	if !f.sent {
		f.buf = append(f.buf, p...)
		if i := bytes.IndexByte(f.buf, '\n'); i >= 0 {
			f.line <- string(f.buf)
			f.sent = true
		}
	}
	return len(p), nil
}

// lockedBuffer is a bytes.Buffer that a process writes while a test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
