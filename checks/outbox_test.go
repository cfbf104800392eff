package checks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	"pgregory.net/rapid"

	"idemlab/exercises/outbox"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
)

// outboxHandler is s's handler as the lab sees one, its e-mail dropped, so
// that the whole matrix runs on it.
//
// The matrix's property test empties the inbox between its stories (see
// emptiedWithInbox), and knows nothing of an outbox.
func outboxHandler(s outbox.Service) lab.Variant {
	return emptiedWithInbox(s.Variant(discard{}))
}

// emptiedWithInbox is v with a trigger that empties every table its schema
// makes besides the inbox and the accounts, empty when made (an outbox, a
// table of receipts, whatever its name, columns and keys), when the inbox
// loses a row.
//
// The matrix's property test runs thousands of stories on one database,
// emptying the inbox and restoring the balances before each (labtest's
// DB.Reset), and it knows nothing of the handler's other tables. So that a
// row kept in one story does not collide with the same event's in the
// next, or stop the inbox's row from going, a trigger is all the matrix
// adds to the schema. It empties those tables whole, whatever their rows
// look like, because the matrix deletes inbox rows only to reset, all of
// them at once, and before the inbox's row goes, so that a table whose
// rows reference the inbox's (ON DELETE RESTRICT, or no action, included)
// lets it go.
func emptiedWithInbox(v lab.Variant) lab.Variant {
	tables := emptyTables(v.Schema)
	if len(tables) == 0 {
		return v
	}
	var trigger strings.Builder
	trigger.WriteString(";\nCREATE TRIGGER lab_reset_outbox BEFORE DELETE ON inbox BEGIN\n")
	for _, t := range tables {
		fmt.Fprintf(&trigger, "\tDELETE FROM \"%s\";\n", strings.ReplaceAll(t, `"`, `""`))
	}
	trigger.WriteString("END;")
	v.Schema += trigger.String()
	return v
}

// emptyTables returns the tables schema makes besides inbox and accounts
// that hold no row once it ran, found by running it on a database in
// memory; none if it does not run there (the lab's own setup then says
// why).
func emptyTables(schema string) []string {
	c, err := sqlite.NewConnector("file::memory:")
	if err != nil {
		return nil
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection, one database in memory
	if _, err := db.Exec(schema); err != nil {
		return nil
	}
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
		AND lower(name) NOT IN ('inbox', 'accounts') ORDER BY name`)
	if err != nil {
		return nil
	}
	var names []string
	for rows.Next() {
		var name string
		if rows.Scan(&name) == nil {
			names = append(names, name)
		}
	}
	rows.Close()
	var empty []string
	for _, name := range names {
		var any bool
		if db.QueryRow(`SELECT EXISTS (SELECT 1 FROM "`+strings.ReplaceAll(name, `"`, `""`)+`")`).Scan(&any) == nil && !any {
			empty = append(empty, name)
		}
	}
	return empty
}

// discard is a mailer that drops every message.
type discard struct{}

func (discard) Send(context.Context, outbox.Message) error { return nil }

var (
	// errAckLost is the error of a send whose acknowledgement was lost:
	// the message was delivered.
	errAckLost = errors.New("connection reset after the message was sent")
	// errRefused is the error of a mail server that refuses a message for
	// now: it was not delivered.
	errRefused = errors.New("421 service not available, try again later")
)

// postman delivers messages to a mailbox. The next send after loseAck is
// set is delivered but reported as failed; the next after refuse is set is
// not delivered at all.
type postman struct {
	to      outbox.Mailbox
	loseAck bool
	refuse  bool
	failed  int // sends reported as failed so far
}

func (p *postman) Send(_ context.Context, m outbox.Message) error {
	if p.refuse {
		p.refuse = false
		p.failed++
		return errRefused
	}
	p.to.Receive(m)
	if p.loseAck {
		p.loseAck = false
		p.failed++
		return errAckLost
	}
	return nil
}

// Outbox is the check of the outbox exercise: OneReceiptPerCredit,
// ResendAfterManyReceipts, ResendAfterDays, the whole matrix held to the
// correct standard, then MailSearch.
//
// ResendAfterManyReceipts and ResendAfterDays are the dimensions MailSearch
// does not vary: how many messages a mailbox takes in between a message
// and its resend (65,537, see resendAfterManyReceipts), and how long the
// relay is down in between (a minute to a month, see resendAfterDays).
//
// MailSearch is the ledger property (see ledger_test.go) with the relay as a
// background job and a mail server that loses acknowledgements and
// refuses messages: 100 stories at -rapid.checks=100. Its dimensions:
//
//   - data, concurrency, pool shape and faults as every ledger property's:
//     sources and event ids hold '/', and twins split a key elsewhere
//     around a '/' (acme/eu's x, acme's eu/x), drawn more often here than
//     elsewhere, so that two credits whose keys written plainly
//     (source/event_id) are one string meet; and one event id from two
//     sources alike, OrderSearch's pairs of orders alike (orderPairs), so
//     that receipt ids meet that share their first 16, 32, 64 or 127
//     bytes, or their FNV-1a 32 or CRC-32 (see alikeSources);
//   - the relay: run alone, with an error before or after any of its
//     statements, killed at any of them (a send it would make after its
//     death never leaves), two relays at once, and relays among deliveries,
//     so that a credit commits while a relay works;
//   - the mail server: a relay's send delivered but its acknowledgement
//     lost, or refused (not delivered), at any send of a run;
//   - time: neither the handler nor the relay is given a clock; one that
//     reads time.Now (or SQLite's localtime), to stamp a row or to pick
//     what to send, reads it in the process's time zone, a sixth of the
//     stories in each of six zones (see Search); the bubble's clock moves
//     by the fractions of a second lock waits take. Days between a send
//     and its resend are ResendAfterDays' to tell: rapid times its stories
//     on the cell's clock, and a story that let days pass would end the
//     search;
//   - the model: after every step no two credits' receipts (the
//     service's Receipt) share an id, since a mailbox keeps one message per
//     id, and the mailbox holds only receipts of events credited, each once
//     and with the credit's body; after the story, the relay runs with a
//     healthy mail server until it has nothing left to send, and then every
//     credit has its receipt.
func Outbox(c *Checker, s outbox.Service) {
	mail := &postman{}
	c.Scenario(oneReceiptPerCredit(s, mail), s.Variant(mail))
	c.Scenario(resendAfterManyReceipts(s, mail), s.Variant(mail))
	c.Scenario(resendAfterDays(s, mail), s.Variant(mail))
	c.Matrix(outboxHandler(s), nil)
	mj := &mailJobs{post: &storyPostman{}, relay: s.Relay, receiver: s.Receiver, receipt: s.Receipt}
	v := s.Variant(mj.post)
	env := &ledgerEnv{newInner: v.New,
		runJob: func(ctx context.Context, pool *sql.DB, _ lab.Event) error { return mj.relay(ctx, pool, mj.post) }}
	spec := &ledgerSpec{
		propertySpec: propertySpec{exercise: "outbox", name: "MailSearch", stories: 100,
			shows: "rapid's stories of credits and relays at once, relays killed or failing at any statement, acknowledgements lost and messages refused: one receipt per credit, none for an event never credited"},
		env: env, jobs: []string{"relay"},
		steps: map[string]func(*ledgerMachine, *rapid.T){"Relay": mj.relayStep, "SlashTwin": slashTwin},
		weights: map[string]int{"New": 3, "Repeat": 2, "Changed": 1, "Twin": 1, "SlashTwin": 2, "AlikeSources": 1, "Missing": 1, "Refused": 1,
			"Fault": 2, "Crash": 2, "Race": 4, "FaultRace": 1, "Reconnect": 1, "Lost": 1, "Restart": 1, "Relay": 4},
		hooks: ledgerHooks{
			begin:     func(*ledgerMachine, *rapid.T) { mj.post.reset(mj.receiver()) },
			opened:    func(lm *ledgerMachine) { mj.post.db = lm.db },
			finish:    mj.drain,
			invariant: func(lm *ledgerMachine) string { return mj.wrong(lm, false) },
			dieAt:     mj.post.dieAt,
			raceJob: func(_ *ledgerMachine, t *rapid.T, _ string) string {
				mj.post.plan(t)
				return "the relay" + mj.post.String()
			},
		},
	}
	c.Search(spec.property(), env.variant(v))
}

// mailJobs is MailSearch's relay and mail: the exercise's Relay, run as a
// job, its mail server, the story's mailbox and the receipts it expects.
type mailJobs struct {
	post     *storyPostman
	relay    func(ctx context.Context, db *sql.DB, m outbox.Mailer) error
	receiver func() outbox.Mailbox
	receipt  func(e lab.Event) outbox.Message
}

// storyPostman is MailSearch's mail server: it delivers to the story's
// mailbox, loses the acknowledgement of a send or refuses one as a relay
// run's plan says, and delivers nothing for a process that a crash killed.
type storyPostman struct {
	mu        sync.Mutex
	to        outbox.Mailbox
	db        *labtest.DB
	sends     int    // sends so far in the story
	loseAckAt int    // the send whose acknowledgement is lost; 0 for none
	refuseAt  int    // the send refused; 0 for none
	planned   string // what the plan says, for the story
	crashAt   int    // a session that has run this many statements is dead; 0 for none
}

// reset starts a story with an empty mailbox.
func (p *storyPostman) reset(to outbox.Mailbox) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.to, p.sends, p.loseAckAt, p.refuseAt, p.planned, p.crashAt = to, 0, 0, 0, "", 0
}

// plan draws what happens to the next sends: nothing, or the k-th one's
// acknowledgement lost, or the k-th one refused.
func (p *storyPostman) plan(t *rapid.T) {
	kind := rapid.IntRange(0, 2).Draw(t, "the mail server")
	k := rapid.IntRange(1, 3).Draw(t, "which send")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loseAckAt, p.refuseAt, p.planned = 0, 0, ""
	switch kind {
	case 1:
		p.loseAckAt = p.sends + k
		p.planned = fmt.Sprintf(" (the mail server loses the acknowledgement of send %d from here)", k)
	case 2:
		p.refuseAt = p.sends + k
		p.planned = fmt.Sprintf(" (the mail server refuses send %d from here)", k)
	}
}

// String says what the plan is.
func (p *storyPostman) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.planned
}

// dieAt makes every session that has run n statements dead (see Crash);
// 0 revives none and kills none.
func (p *storyPostman) dieAt(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.crashAt = n
}

// errDead is what a send from a dead process gets; nobody sees it.
var errDead = errors.New("the process is dead")

// Send delivers m as planned.
func (p *storyPostman) Send(ctx context.Context, m outbox.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.crashAt > 0 && p.db.Steps(labtest.SessionOf(ctx)) >= p.crashAt {
		return errDead
	}
	p.sends++
	if p.sends == p.refuseAt {
		return errRefused
	}
	p.to.Receive(m)
	if p.sends == p.loseAckAt {
		return errAckLost
	}
	return nil
}

// sent returns how many sends the story's relays made, delivered or not.
func (p *storyPostman) sent() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sends
}

// messages returns what the mailbox holds.
func (p *storyPostman) messages() []outbox.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]outbox.Message(nil), p.to.Messages()...)
}

// relayStep runs the relay as a job of its own: plainly, with an error before
// or after one of its statements, or killed there (the service restarted).
func (mj *mailJobs) relayStep(lm *ledgerMachine, t *rapid.T) {
	post := mj.post
	post.plan(t)
	mark := lm.c.Transcript.Len()
	switch rapid.IntRange(0, 3).Draw(t, "how the relay goes") {
	case 0, 1:
		a := lm.db.Deliver(job("relay"), labtest.Delivery{Unchecked: true})
		lm.story.add("the relay runs%s: %s%s", post, jobString(a), indented(lm.c.Transcript.From(mark)))
	case 2:
		f := labtest.Fault{When: drawWhen(t), N: rapid.IntRange(1, 4).Draw(t, "statement")}
		lm.db.Inject(f)
		a := lm.db.Deliver(job("relay"), labtest.Delivery{Unchecked: true})
		lm.db.Lift()
		lm.story.add("the relay runs%s with a fault %s statement %d: %s%s", post, f.When, f.N, jobString(a), indented(lm.c.Transcript.From(mark)))
	case 3:
		when, n := drawWhen(t), rapid.IntRange(1, 4).Draw(t, "statement")
		post.dieAt(n)
		a := lm.db.Deliver(job("relay"), labtest.Delivery{Kill: when, KillAt: n})
		post.dieAt(0)
		if !a.Killed {
			lm.story.add("the relay runs%s, to be killed %s statement %d, which it never reaches: %s%s", post, when, n, jobString(a),
				indented(lm.c.Transcript.From(mark)))
			break
		}
		lm.story.add("the relay runs%s, the process killed %s statement %d, the service restarted%s", post, when, n,
			indented(lm.c.Transcript.From(mark)))
	}
	lm.settle(t, nil, mark, nil) // the relay leaves the ledger alone
}

// slashTwin delivers a twin of a known key split elsewhere around a '/'
// (acme's eu/x for acme/eu's x): another event, whose key written plainly,
// source/event_id, is the known one's. Twin draws such twins among its
// other kinds, from one known key; MailSearch draws them more often, from
// every known key that has one, because a message id is a key written as
// one string.
func slashTwin(lm *ledgerMachine, t *rapid.T) {
	var twins []lab.Key
	for _, k := range lm.redeliverable() {
		twins = append(twins, lm.twinsOf(k, "split at /")...)
	}
	if len(twins) == 0 {
		t.SkipNow() // no known key holds a '/'
	}
	k := rapid.SampledFrom(twins).Draw(t, "twin")
	e, ok := lm.m.stored[k]
	if !ok {
		e = lab.Event{Source: k.Source, EventID: k.EventID, AccountID: lm.account(t), Amount: lm.amount(t)}
	}
	lm.deliver(t, "deliver a twin", e)
}

// pauses are how long ResendAfterDays lets the clock run between a send
// and its resend: a minute to a month, just past the windows a mailbox may
// forget an id after (a day, two, three, a week, two, 30 days).
var pauses = []time.Duration{time.Minute, 15 * time.Minute, time.Hour, 6 * time.Hour, 25 * time.Hour, 36 * time.Hour, 49 * time.Hour,
	73 * time.Hour, 8 * 24 * time.Hour, 15 * 24 * time.Hour, 31 * 24 * time.Hour}

// relayLosingAck runs s's relay once with a mail server that delivers a
// message and loses its acknowledgement, so that the relay takes the send
// for failed; an error the relay returns for anything else fails r.
func relayLosingAck(r *labtest.Run, s outbox.Service, db *labtest.DB, mail *postman) {
	mail.loseAck = true
	failed := mail.failed
	if err := s.Relay(context.Background(), db.Pool(), mail); err != nil && mail.failed == failed {
		r.Errorf("Relay: %v", err)
	}
	mail.loseAck = false
}

// resendAfterDays: for each of pauses, a new credit, whose receipt the
// relay sends and the mail server delivers but whose acknowledgement it
// loses; then the relay's host is down for that long, and its next run
// sends the receipt again. The mailbox must hold each receipt once. The
// clock is the one the mailbox reads, the cell's bubble's
// (testing/synctest), which a sleep moves at once: nothing else runs
// meanwhile.
func resendAfterDays(s outbox.Service, mail *postman) labtest.Scenario {
	return labtest.Scenario{
		Name:  "ResendAfterDays",
		Shows: "a receipt whose acknowledgement was lost, sent again after the relay was down a minute, an hour, … a month: one copy each",
		Run: func(r *labtest.Run) {
			ctx := context.Background()
			mailbox := s.Receiver()
			mail.to = mailbox
			db := r.Open()
			for i, d := range pauses {
				e := lab.Event{Source: "provider-a", EventID: fmt.Sprintf("evt-%d", i+1), AccountID: 1, Amount: 100}
				r.WantOutcome(db.Deliver(e), lab.Applied)
				relayLosingAck(r, s, db, mail)
				time.Sleep(d)
				r.Transcript.Note("", fmt.Sprintf("%v pass, the relay's host down, to %s", d, showTime(time.Now())), "")
				if err := s.Relay(ctx, db.Pool(), mail); err != nil {
					r.Errorf("Relay, %v later, with a mail server that accepts everything: %v", d, err)
				}
				id, n := s.Receipt(e).ID, 0
				for _, m := range mailbox.Messages() {
					if m.ID == id {
						n++
					}
				}
				if n != 1 {
					r.Errorf("receipts for %s in the mailbox = %d, want 1: its acknowledgement was lost, and the relay sent it again %v later",
						scenarios.ShowKey(id), n, d)
				}
			}
		},
	}
}

// jobString renders a job's answer.
func jobString(a labtest.Answer) string {
	if errors.Is(a.Err, errJobDone) {
		return "done"
	}
	return a.String()
}

// drain runs the relay, sessionless and with a mail server that accepts
// everything, until every credit's receipt is in the mailbox and a run
// sends nothing, and checks that every credit has its receipt. A relay may
// send a few messages a run (a job runs it every few seconds), and a run
// may send again a message whose acknowledgement was lost: each run of a
// working relay sends at least one message that waits, so as many runs as
// there are credits, and a few more, send everything.
func (mj *mailJobs) drain(lm *ledgerMachine, t *rapid.T) {
	post := mj.post
	post.mu.Lock()
	post.loseAckAt, post.refuseAt, post.planned, post.crashAt = 0, 0, "", 0
	post.mu.Unlock()
	lm.env.mu.Lock()
	pool := lm.env.pool
	lm.env.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	for runs < len(lm.m.stored)+3 {
		before := post.sent()
		runs++
		if err := mj.relay(ctx, pool, post); err != nil {
			lm.fail(t, "after the story, Relay = %v, with a mail server that accepts everything", err)
		}
		if post.sent() == before && mj.missing(lm) == 0 {
			break // every credit's receipt is in, and nothing waits
		}
	}
	lm.story.add("the relay runs %s, the mail server accepting everything, until every credit's receipt is in the mailbox and a run sends nothing",
		report.Count(runs, "time", "times"))
	if why := mj.wrong(lm, true); why != "" {
		lm.fail(t, "%s", why)
	}
}

// missing counts the credits whose receipt is not in the mailbox.
func (mj *mailJobs) missing(lm *ledgerMachine) int {
	in := map[string]bool{}
	for _, m := range mj.post.messages() {
		in[m.ID] = true
	}
	n := 0
	for _, e := range lm.m.stored {
		if !in[mj.receipt(e).ID] {
			n++
		}
	}
	return n
}

// wrong says what is wrong with the mailbox: two credits whose receipts
// share an id (a mailbox keeps one message per id), a receipt for an event
// never credited, or with another body than its credit's, or twice; and
// once the relay has sent everything (final), a credit without its receipt.
func (mj *mailJobs) wrong(lm *ledgerMachine, final bool) string {
	var wrong []string
	credited := map[string]outbox.Message{}
	creditOf := map[string]lab.Key{}
	for _, k := range sortedKeys(lm.m.stored) {
		m := mj.receipt(lm.m.stored[k])
		if other, ok := creditOf[m.ID]; ok {
			wrong = append(wrong, fmt.Sprintf("Receipt(source %s, event %s).ID = %s, want another id than Receipt(source %s, event %s)'s: a mailbox keeps one message per id, and both events were credited",
				scenarios.ShowKey(k.Source), scenarios.ShowKey(k.EventID), scenarios.ShowKey(m.ID), scenarios.ShowKey(other.Source), scenarios.ShowKey(other.EventID)))
			continue
		}
		credited[m.ID], creditOf[m.ID] = m, k
	}
	got := map[string]int{}
	for _, m := range mj.post.messages() {
		got[m.ID]++
		want, ok := credited[m.ID]
		switch {
		case !ok:
			wrong = append(wrong, fmt.Sprintf("the mailbox holds a receipt for %s, which was never credited", scenarios.ShowKey(m.ID)))
		case m.Body != want.Body:
			wrong = append(wrong, fmt.Sprintf("the mailbox holds %q for %s, want %q", m.Body, scenarios.ShowKey(m.ID), want.Body))
		case got[m.ID] == 2:
			wrong = append(wrong, fmt.Sprintf("the mailbox holds two receipts for %s, want one", scenarios.ShowKey(m.ID)))
		}
	}
	if final {
		for _, k := range sortedKeys(lm.m.stored) {
			if m := mj.receipt(lm.m.stored[k]); got[m.ID] == 0 {
				wrong = append(wrong, fmt.Sprintf("receipts for %s in the mailbox = 0, want 1: it was credited, and the relay has sent all it will", scenarios.ShowKey(m.ID)))
			}
		}
	}
	return strings.Join(wrong, "; ")
}

// oneReceiptPerCredit tells five stories, the relay running twice (as a job
// would) after each, and then counts the receipts in the mailbox: exactly
// one per credit, none for an event that was never credited.
//
//   - evt-1: its COMMIT fails; the provider retries, and it is credited.
//   - evt-2: the mail server delivers its receipt but the acknowledgement
//     is lost, so the sender thinks it failed.
//   - evt-3: its COMMIT fails and the provider never retries: no credit,
//     so no receipt.
//   - evt-4: the mail server refuses its receipt once, then accepts.
//   - evt-5: the answer is lost after its COMMIT; the provider retries and
//     is told duplicate.
func oneReceiptPerCredit(s outbox.Service, mail *postman) labtest.Scenario {
	return labtest.Scenario{
		Name:  "OneReceiptPerCredit",
		Shows: "a COMMIT that fails (retried, or never), a lost acknowledgement, a refusing mail server, a lost answer: one receipt per credit",
		Run: func(r *labtest.Run) {
			ctx := context.Background()
			mailbox := s.Receiver()
			mail.to = mailbox
			db := r.Open()
			relay := func() {
				for range 2 {
					failed := mail.failed
					if err := s.Relay(ctx, db.Pool(), mail); err != nil && mail.failed == failed {
						r.Errorf("Relay: %v", err)
					}
				}
			}
			event := func(id string) lab.Event {
				return lab.Event{Source: "provider-a", EventID: id, AccountID: 1, Amount: 100}
			}
			// deliver delivers e as a provider does: again after an error,
			// up to three times.
			deliver := func(e lab.Event) {
				for range 3 {
					if a := db.Deliver(e, labtest.Delivery{Unchecked: true}); a.Err == nil {
						return
					}
				}
				r.Errorf("Process(%v) failed three times", e)
			}

			db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpCommit})
			deliver(event("evt-1"))
			db.Lift()
			relay()

			mail.loseAck = true
			deliver(event("evt-2"))
			relay()

			db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpCommit})
			db.Deliver(event("evt-3"), labtest.Delivery{Unchecked: true}) // fails, and is never retried
			db.Lift()
			relay()

			deliver(event("evt-4"))
			mail.refuse = true
			relay()
			relay()

			db.Inject(labtest.Fault{When: labtest.After, Op: labtest.OpCommit})
			deliver(event("evt-5"))
			db.Lift()
			relay()

			count := map[string]int{}
			for _, m := range mailbox.Messages() {
				count[m.ID]++
			}
			for i, want := range []int{1, 1, 0, 1, 1} {
				id := s.Receipt(event(fmt.Sprintf("evt-%d", i+1))).ID
				if got := count[id]; got != want {
					r.Errorf("receipts for %s in the mailbox = %d, want %d", id, got, want)
				}
			}
			r.WantBalance(db, 1, 400)
		},
	}
}

// receiptsBetween is how many other messages ResendAfterManyReceipts hands
// the mailbox between a receipt and its resend: more than a mailbox that
// remembers only the recent ids holds, at the bounds a developer picks
// (64, 1,000, 10,000, 16,384, 50,000, 65,536 of them), and no round
// number. A bound above it goes unseen: any count does, for some bound.
// The story takes the reference solution a second or two (its 64 relay
// runs, see refusedEvery, included); a mailbox that looks for an id among
// all it holds, one by one, half a minute.
const receiptsBetween = 65537

// refusedEvery is how many of the other receipts reach the mailbox between
// two runs of the relay in ResendAfterManyReceipts, each refused by the
// mail server: the runs are statements, which tell the lab that the story
// goes on while a mailbox that looks for an id among all it holds, one by
// one, takes seconds over the receipts.
const refusedEvery = 1024

// resentEvery is the step of the other receipts that
// ResendAfterManyReceipts sends again at the end: the first, every
// resentEvery-th, and the last, the old and the recent.
const resentEvery = 64

// resendAfterManyReceipts: the mail server delivers evt-1's receipt but
// loses the acknowledgement, so the relay keeps it to send again; the mail
// server then refuses it at every run of the relay for hours, while
// receiptsBetween other receipts reach the same mailbox, other shops'
// (provider-b's events). The resend must still be dropped: the mailbox
// holds evt-1's receipt once. Then one in resentEvery of the others
// arrives again, from the first to the last (their relays'
// acknowledgements were lost too): each must be dropped, every id ever
// taken in being still refused, whichever a bounded mailbox forgets (the
// oldest, or any once it is full).
func resendAfterManyReceipts(s outbox.Service, mail *postman) labtest.Scenario {
	return labtest.Scenario{
		Name: "ResendAfterManyReceipts",
		Shows: fmt.Sprintf("a receipt resent after %s reached the mailbox, then one in %d of those: one copy each",
			report.Count(receiptsBetween, "other message", "other messages"), resentEvery),
		Run: func(r *labtest.Run) {
			ctx := context.Background()
			mailbox := s.Receiver()
			mail.to = mailbox
			db := r.Open()
			e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 100}
			r.WantOutcome(db.Deliver(e), lab.Applied)
			relayLosingAck(r, s, db, mail)
			other := func(i int) outbox.Message {
				return s.Receipt(lab.Event{Source: "provider-b", EventID: fmt.Sprintf("order-%06d", i+1), AccountID: 1, Amount: 100})
			}
			for i := range receiptsBetween {
				mailbox.Receive(other(i))
				if (i+1)%refusedEvery == 0 {
					// The relay's run of these few seconds: the mail server
					// still refuses evt-1's receipt.
					mail.refuse = true
					failed := mail.failed
					var err error
					db.RunSessions(func(ctx context.Context) {
						ctx, cancel := context.WithCancel(ctx) // a context that can end, as a job's does
						defer cancel()
						err = s.Relay(ctx, db.Pool(), mail)
					})
					if err != nil && mail.failed == failed {
						r.Errorf("Relay, with a mail server that refuses a message: %v", err)
					}
					mail.refuse = false
				}
			}
			for range 2 {
				if err := s.Relay(ctx, db.Pool(), mail); err != nil {
					r.Errorf("Relay, with a mail server that accepts everything: %v", err)
				}
			}
			id := s.Receipt(e).ID
			count := map[string]int{}
			for _, m := range mailbox.Messages() {
				count[m.ID]++
			}
			if got := count[id]; got != 1 {
				r.Errorf("receipts for %s in the mailbox = %d, want 1: its acknowledgement was lost, and the relay sent it again after %s reached the mailbox",
					scenarios.ShowKey(id), got, report.Count(receiptsBetween, "other message", "other messages"))
			}
			var twice, missing int
			for i := range receiptsBetween {
				switch count[other(i).ID] {
				case 0:
					missing++
				case 1:
				default:
					twice++
				}
			}
			if missing > 0 || twice > 0 {
				r.Errorf("of the %d other messages, the mailbox holds %d not at all and %d more than once, want every one once",
					receiptsBetween, missing, twice)
			}
			resent := 0
			before := len(mailbox.Messages())
			for i := 0; i < receiptsBetween; i += resentEvery {
				mailbox.Receive(other(i))
				resent++
			}
			mailbox.Receive(other(receiptsBetween - 1))
			resent++
			if kept := len(mailbox.Messages()) - before; kept > 0 {
				r.Errorf("of %d of the other messages sent again (one in %d, the first to the last), the mailbox kept %d, want none: it took each in before",
					resent, resentEvery, kept)
			}
			r.WantBalance(db, 1, 100)
		},
	}
}
