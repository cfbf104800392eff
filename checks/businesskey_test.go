package checks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"idemlab/exercises/businesskey"
	"idemlab/exercises/outbox"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/scenarios"
)

// The matrix's scenarios are about a ledger (accounts and their balances,
// every inbox row backed by its credit); this exercise is about orders, and
// its solution records two events for one activation on purpose, so the
// matrix does not apply. The check runs the lab's engine all the same — its
// statement-hooking driver, its scheduler, its faults and transcripts —
// through an adapter: account n stands for order-n (the lab seeds
// accounts, a trigger opens their orders), and an event's payload is the
// payment. The ledger invariants are not checked; the check reads orders
// and inbox itself.

// orderVariant is s as the lab's engine sees a handler.
func orderVariant(s businesskey.Service) lab.Variant {
	return lab.Variant{Name: s.Name, Mistake: "an exercise", DSN: s.DSN,
		Schema: s.Schema + `;
CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL DEFAULT 0);
CREATE TRIGGER open_order AFTER INSERT ON accounts BEGIN
	INSERT INTO orders (id) VALUES ('order-' || NEW.id);
END;`,
		New: func(db *sql.DB) lab.Processor { return paying{s.New(db)} }}
}

// paying delivers a lab event as the payment of order-<account>.
type paying struct{ p businesskey.Processor }

func (p paying) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	return p.p.Process(ctx, payment(e))
}

func payment(e lab.Event) businesskey.Payment {
	return businesskey.Payment{Source: e.Source, EventID: e.EventID, OrderID: fmt.Sprintf("order-%d", e.AccountID), Amount: e.Amount}
}

// pay is a payment of order-<order> as the lab delivers it.
func pay(source, eventID string, order, amount int64) lab.Event {
	return lab.Event{Source: source, EventID: eventID, AccountID: order, Amount: amount}
}

// BusinessKey is the check of the businesskey exercise: OneActivation (a
// story told in order), OrderRace (the two events of one order in every
// interleaving), OrderFaults (an error at every statement of the first
// event) and LaterPayments (the payment reported again minutes to weeks
// later), each asking for one activation per order and every event
// recorded as seen; then OrderSearch.
//
// OrderSearch is a model-based property of its own (orders, not a ledger):
// 100 stories at -rapid.checks=100. Its dimensions:
//
//   - data: two or three orders a story, whose ids mix case (order-A beside
//     order-a), hold multi-byte runes, composed and decomposed accents, a
//     '/', or are exactly 128 bytes long, and, in half the stories, one
//     that is another with white space in front or behind ("order-42 ",
//     "\torder-A": what a trimmed key or an RTRIM collation takes for one
//     order), or, in most of the others, two orders alike (orderPairs): ids
//     that share their first 16, 32, 64 or 127 bytes and differ only after
//     (what a key cut to that many bytes takes for one order), ids whose
//     FNV-1a 32 or CRC-32 is one (what a key hashed to 32 bits takes for
//     one), and ids that read as one number (what a column of numeric
//     affinity takes for one); payments of one order under new event ids, from several
//     sources (which differ by case too), with the same amount or another
//     (1, small, at the amount cap), and repeats of known events, with their amount or another;
//   - concurrency: two or three sessions, each paying one or two times
//     (one event in several sessions, several events of one order, other
//     orders), interleaved at every statement by a schedule rapid draws,
//     sometimes with an error injected into the first statement of a kind
//     one of them runs;
//   - pool shape: one connection, two, or as many as the handler opens; idle
//     connections closed mid-story; a restart;
//   - faults: an error before or after any statement of a payment, then its
//     retry; the process killed before or after any statement, the service
//     restarted, then the retry;
//   - time: the exercise has no clock (no window), and a claim holds
//     forever; a handler that reads time.Now (or SQLite's localtime) reads
//     it in the process's time zone, a sixth of the stories in each of six
//     zones (see Search). Days between payments are LaterPayments' to
//     tell: rapid times its stories on the cell's clock, and a story that
//     let days pass would end the search;
//   - the model: an order is activated once, whatever events and amounts
//     report it; every event is recorded as seen, once; the first payment
//     event of an order is applied, every other one (and every repeat) a
//     duplicate; for payments at once, those of some order of them, each
//     one that failed entirely done or not at all.
func BusinessKey(c *Checker, s businesskey.Service) {
	v := orderVariant(s)
	for _, g := range []orderGuarantee{oneActivation, orderRace, orderFaults, laterPayments} {
		if c.Done() {
			return
		}
		if c.Skips(g.name) {
			continue
		}
		if f, ok := g.cell(c, v); !ok {
			c.Fail(f)
		}
	}
	env := &orderEnv{s: s}
	spec := propertySpec{exercise: "businesskey", name: "OrderSearch", stories: 100,
		shows: "rapid's stories of payments for orders whose ids look alike, under several event ids and amounts, at once, under faults and crashes: each order activated once, every event recorded once",
		story: env.tell}
	c.Search(spec, env.variant())
}

// orderEnv is what OrderSearch's variant shares with its stories: the
// handler of the story under way, its pool and shape, and the ids of the
// story's orders, which the lab's events name by number (account n pays
// the story's n-th order).
type orderEnv struct {
	s      businesskey.Service
	mu     sync.Mutex
	shape  poolShape
	pool   *sql.DB
	inner  businesskey.Processor
	orders []string
}

// variant is the exercise's handler as the lab's engine sees one: its
// schema and an accounts table for the lab to seed (one account per order
// of the story; the story creates the orders), and events turned into
// payments of the story's orders.
func (env *orderEnv) variant() lab.Variant {
	return lab.Variant{Name: env.s.Name, Mistake: "an exercise", DSN: env.s.DSN,
		Schema: env.s.Schema + `;
CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL DEFAULT 0);`,
		New: func(db *sql.DB) lab.Processor {
			env.mu.Lock()
			defer env.mu.Unlock()
			env.pool = db
			db.SetMaxOpenConns(int(env.shape))
			env.inner = env.s.New(db)
			return orderPaying{env}
		}}
}

// orderPaying delivers a lab event as a payment of the story's order.
type orderPaying struct{ env *orderEnv }

func (p orderPaying) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	return p.env.handler().Process(ctx, p.env.payment(e))
}

func (env *orderEnv) handler() businesskey.Processor {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.inner
}

// payment is e as a payment of the story's e.AccountID-th order; before
// any story (the lab's probe of the handler for Go locks, see
// labtest.RunCell), of order-<e.AccountID>, as orderVariant's.
func (env *orderEnv) payment(e lab.Event) businesskey.Payment {
	env.mu.Lock()
	defer env.mu.Unlock()
	order := fmt.Sprintf("order-%d", e.AccountID)
	if 1 <= e.AccountID && e.AccountID <= int64(len(env.orders)) {
		order = env.orders[e.AccountID-1]
	}
	return businesskey.Payment{Source: e.Source, EventID: e.EventID, OrderID: order, Amount: e.Amount}
}

// storyOrders are the order ids OrderSearch draws from: a case pair, a
// composed and a decomposed accent, another script, a '/', and one of
// exactly 128 bytes; a story may also pad one of them (orderPads).
var storyOrders = []string{"order-42", "order-A", "order-a", "ORDER-42", "order-\u00e9", "order-e\u0301", "заказ-7", "orders/42",
	exactly(lab.MaxKeyBytes, "order-", "€")}

// orderPairs are pairs of order ids alike, which a story without a padded
// look-alike takes for its first and last orders (but for the first pair,
// none): ids that share their first 16, 32, 64 or 127 bytes and differ only
// after (order-1234567890 is 16 bytes long, order-12345678901 the same and
// one more), and ids that a 32-bit hash takes for one: FNV-1a 32 (both
// 4001749250) and CRC-32 IEEE (both 3829696261), as TestOrderPairsCollide
// computes; and ids that read as one number (42 and 042, 100 and 1e2),
// which a column of numeric affinity stores as that number
// (https://sqlite.org/datatype3.html, "Type Affinity"). None is among
// storyOrders.
var orderPairs = [][2]string{{"", ""},
	{"order-1234567890", "order-12345678901"},
	alikePast(16), alikePast(32), alikePast(64), alikePast(lab.MaxKeyBytes - 1),
	{"order-229599", "order-432382"},
	{"order-0URYL1LJ", "order-XWSZ5ZH7"},
	{"42", "042"}, {"100", "1e2"},
}

// alikePast returns two order ids of n+1 bytes that share their first n
// bytes and differ in the last one.
func alikePast(n int) [2]string {
	prefix := exactly(n, "order-", "0")
	return [2]string{prefix + "1", prefix + "2"}
}

// orderPads are the white space an order's look-alike adds to another
// order's id, in front or behind (see orderEnv.tell): none half the time,
// else a space (SQLite's RTRIM collation ignores those behind), two, a
// tab, a newline, a carriage return, a no-break space, which
// strings.TrimSpace all strips.
var orderPads = []string{"", "", "", "", "", "", " ", " ", "  ", "\t", "\n", "\r", "\u00a0"}

// orderMachine is one story of OrderSearch.
type orderMachine struct {
	env       *orderEnv
	c         *labtest.Run
	db        *labtest.DB
	activated map[string]bool
	seen      map[lab.Key]lab.Event // every event recorded, as first paid
	story     *story
	next      int
}

// orderModel is what an ideal handler would have recorded.
type orderModel struct {
	activated map[string]bool
	seen      map[lab.Key]lab.Event
}

func (m orderModel) clone() orderModel {
	return orderModel{maps.Clone(m.activated), maps.Clone(m.seen)}
}

// tell tells one story.
func (env *orderEnv) tell(c *labtest.Run, t *rapid.T) {
	om := &orderMachine{env: env, c: c, activated: map[string]bool{}, seen: map[lab.Key]lab.Event{}, story: &story{}}
	shape := drawShape(t)
	n := rapid.IntRange(2, 3).Draw(t, "orders")
	orders := rapid.SliceOfNDistinct(rapid.SampledFrom(storyOrders), n, n, rapid.ID[string]).Draw(t, "order ids")
	pad := rapid.SampledFrom(orderPads).Draw(t, "an order's look-alike")
	if pad == "" {
		// The first and the last orders are a pair alike: two orders, which
		// a key cut short or hashed to 32 bits takes for one.
		if pair := rapid.SampledFrom(orderPairs).Draw(t, "a pair of orders alike"); pair[0] != "" {
			orders[0], orders[n-1] = pair[0], pair[1]
		}
	} else {
		// The last order is the first one padded with white space: two
		// orders, which a key trimmed (or compared under RTRIM) takes for one.
		base := orders[0]
		twin := base + pad
		if rapid.Bool().Draw(t, "padded in front") {
			twin = pad + base
		}
		if len(twin) <= lab.MaxKeyBytes {
			orders[n-1] = twin
		}
	}
	env.mu.Lock()
	env.shape, env.orders = shape, orders
	env.mu.Unlock()
	var accounts []labtest.Account
	var named []string
	for i, id := range orders {
		accounts = append(accounts, labtest.Account{ID: int64(i + 1)})
		named = append(named, scenarios.ShowKey(id))
	}
	om.story.setup("%s; orders %s, none activated", shape, strings.Join(named, ", "))
	om.db = c.OpenScheduled(accounts...)
	for _, id := range orders {
		if _, err := om.pool().ExecContext(context.Background(), `INSERT INTO orders (id) VALUES ($1)`, id); err != nil {
			c.Errorf("creating order %s: %v", scenarios.ShowKey(id), err)
			t.Fatalf("creating order %s: %v", scenarios.ShowKey(id), err)
		}
	}
	defer func() { om.db.Discard() }()
	t.Repeat(map[string]func(*rapid.T){
		"":    om.check,
		"Pay": om.Pay, "Pay#2": om.Pay, "Pay#3": om.Pay,
		"Repeat": om.Repeat, "Repeat#2": om.Repeat,
		"Race": om.Race, "Race#2": om.Race, "Race#3": om.Race, "Race#4": om.Race,
		"Fault": om.Fault, "Fault#2": om.Fault,
		"Crash":     om.Crash,
		"Reconnect": om.Reconnect,
		"Restart":   om.Restart,
	})
}

func (om *orderMachine) pool() *sql.DB {
	om.env.mu.Lock()
	defer om.env.mu.Unlock()
	return om.env.pool
}

func (om *orderMachine) model() orderModel { return orderModel{om.activated, om.seen} }

// fail ends the story with what went wrong and the story so far.
func (om *orderMachine) fail(t *rapid.T, format string, args ...any) {
	t.Fatalf("%s\n\nthe story:\n%s", fmt.Sprintf(format, args...), om.story)
}

// check is the invariant after every step: the lab saw nothing wrong.
func (om *orderMachine) check(t *rapid.T) {
	if fs := om.c.Failures(); len(fs) > 0 {
		om.fail(t, "%s", fs[0])
	}
}

// show renders a payment event as the story tells it.
func (om *orderMachine) show(e lab.Event) string {
	return fmt.Sprintf("%s/%s pays %s %d", scenarios.ShowKey(e.Source), scenarios.ShowKey(e.EventID), scenarios.ShowKey(om.env.payment(e).OrderID), e.Amount)
}

// fresh draws a payment event never seen: one of the story's orders, under
// a new event id, from a source, with an amount.
func (om *orderMachine) fresh(t *rapid.T) lab.Event {
	om.next++
	source := rapid.SampledFrom([]string{"provider-a", "provider-b", "Provider-A"}).Draw(t, "source")
	id := rapid.SampledFrom([]string{"evt-%d", "EVT-%d", "évt-%d", "pay_%dAbC"}).Draw(t, "event id")
	return lab.Event{Source: source, EventID: fmt.Sprintf(id, om.next),
		AccountID: int64(rapid.IntRange(1, len(om.env.orders)).Draw(t, "order")),
		Amount:    rapid.SampledFrom([]int64{1, 500, 700, lab.MaxAmount}).Draw(t, "amount")}
}

// known draws an event seen before, with its amount or another.
func (om *orderMachine) known(t *rapid.T) lab.Event {
	if len(om.seen) == 0 {
		t.SkipNow() // no payment yet
	}
	e := om.seen[rapid.SampledFrom(sortedKeys(om.seen)).Draw(t, "known")]
	if rapid.Bool().Draw(t, "another amount") {
		e.Amount++
	}
	return e
}

// Pay delivers a new payment event.
func (om *orderMachine) Pay(t *rapid.T) { om.deliver(t, "pay", om.fresh(t)) }

// Repeat delivers a known payment event again.
func (om *orderMachine) Repeat(t *rapid.T) { om.deliver(t, "pay again", om.known(t)) }

func (om *orderMachine) deliver(t *rapid.T, what string, e lab.Event) {
	mark := om.c.Transcript.Len()
	a := om.db.Deliver(e, labtest.Delivery{Unchecked: true})
	om.story.add("%s %s: %v", what, om.show(e), a)
	om.settle(t, [][]labtest.Answer{{a}}, mark)
}

// Fault delivers a payment with an error injected before or after one of
// its statements, then delivers it again.
func (om *orderMachine) Fault(t *rapid.T) {
	e := om.fresh(t)
	if len(om.seen) > 0 && rapid.Bool().Draw(t, "known") {
		e = om.known(t)
	}
	f := labtest.Fault{When: drawWhen(t), N: rapid.IntRange(1, 6).Draw(t, "statement")}
	mark := om.c.Transcript.Len()
	fault := om.db.Inject(f)
	a := om.db.Deliver(e, labtest.Delivery{Unchecked: true})
	om.db.Lift()
	om.story.add("pay %s with a fault %s statement %d: %v%s", om.show(e), f.When, f.N, a, indented(om.c.Transcript.From(mark)))
	if fault.Fired() == 0 {
		om.settle(t, [][]labtest.Answer{{a}}, mark)
		return
	}
	om.settle(t, [][]labtest.Answer{{a}}, mark)
	om.deliver(t, "pay again", e)
}

// Crash delivers a payment and kills the process before or after one of
// its statements, restarts the service, and delivers it again.
func (om *orderMachine) Crash(t *rapid.T) {
	e := om.fresh(t)
	when, n := drawWhen(t), rapid.IntRange(1, 6).Draw(t, "statement")
	mark := om.c.Transcript.Len()
	a := om.db.Deliver(e, labtest.Delivery{Kill: when, KillAt: n})
	if !a.Killed {
		om.story.add("pay %s, to be killed %s statement %d, which it never reaches: %v", om.show(e), when, n, a)
		om.settle(t, [][]labtest.Answer{{a}}, mark)
		return
	}
	om.story.add("pay %s, the process killed %s statement %d, the service restarted%s", om.show(e), when, n, indented(om.c.Transcript.From(mark)))
	om.settle(t, [][]labtest.Answer{{{Session: "(killed)", Event: e, Err: errKilledStory}}}, mark)
	om.deliver(t, "pay again", e)
}

// Race pays in two or three sessions at once, each one or two payments,
// drawn around one new payment event: itself, another event of its order,
// or any other; sometimes with an error injected.
func (om *orderMachine) Race(t *rapid.T) {
	base := om.fresh(t)
	n := rapid.IntRange(2, 3).Draw(t, "sessions")
	sessions := make([][]lab.Event, n)
	var told []string
	for i := range sessions {
		var parts []string
		for range rapid.IntRange(1, 2).Draw(t, "payments in the session") {
			e := base
			switch rapid.SampledFrom([]string{"same", "same", "same order", "other", "known"}).Draw(t, "race item") {
			case "same order":
				e = om.fresh(t)
				e.AccountID = base.AccountID
			case "other":
				e = om.fresh(t)
			case "known":
				if len(om.seen) > 0 {
					e = om.known(t)
				}
			}
			sessions[i] = append(sessions[i], e)
			parts = append(parts, om.show(e))
		}
		told = append(told, strings.Join(parts, " then "))
	}
	var fault *labtest.Fault
	if rapid.Bool().Draw(t, "a fault in the race") {
		fault = om.db.Inject(labtest.Fault{When: drawWhen(t), Op: rapid.SampledFrom(faultOps).Draw(t, "fault's statement")})
	}
	mark := om.c.Transcript.Len()
	answers, schedule := om.db.Interleave(func(step int, parked []string, _ string) string {
		return rapid.SampledFrom(parked).Draw(t, fmt.Sprintf("step %d", step+1))
	}, sessions...)
	om.db.Lift()
	what := fmt.Sprintf("at once: %s; schedule %s", strings.Join(told, " | "), schedule)
	if fault != nil && fault.Fired() > 0 {
		what += fmt.Sprintf("; a %s", fault)
	}
	om.story.add("%s: %s%s", what, showAnswers(answers), indented(om.c.Transcript.From(mark)))
	var grouped [][]labtest.Answer
	index := map[string]int{}
	for _, a := range answers {
		i, ok := index[a.Session]
		if !ok {
			i = len(grouped)
			index[a.Session] = i
			grouped = append(grouped, nil)
		}
		grouped[i] = append(grouped[i], a)
	}
	om.settle(t, grouped, mark)
}

// Reconnect closes the pool's idle connections.
func (om *orderMachine) Reconnect(t *rapid.T) {
	pool := om.pool()
	pool.SetMaxIdleConns(0)
	pool.SetMaxIdleConns(2)
	om.story.add("the pool closes its idle connections: the next statement opens a new one")
}

// Restart replaces the handler by a new one on the same pool.
func (om *orderMachine) Restart(t *rapid.T) {
	om.env.mu.Lock()
	om.env.inner = om.env.s.New(om.env.pool)
	om.env.mu.Unlock()
	om.story.add("the service restarts: a new handler on the same database")
}

// expect is the model's answer to a payment, and what it records.
func (om *orderMachine) expect(m orderModel, e lab.Event) lab.Outcome {
	if _, ok := m.seen[e.Key()]; ok || m.activated[om.env.payment(e).OrderID] {
		return lab.Duplicate
	}
	return lab.Applied
}

// record is m after the payment e took effect.
func (om *orderMachine) record(m orderModel, e lab.Event) orderModel {
	m = m.clone()
	if _, ok := m.seen[e.Key()]; !ok {
		m.seen[e.Key()] = e
		m.activated[om.env.payment(e).OrderID] = true
	}
	return m
}

// settle finds an order of the sessions' answers, and for each payment
// whose answer leaves open whether it took effect, whether it did, under
// which every answer is the model's and the database the model's; it
// adopts that model, or fails the story.
func (om *orderMachine) settle(t *rapid.T, sessions [][]labtest.Answer, mark int) {
	activations, inbox, err := om.read()
	if err != nil {
		om.fail(t, "reading the orders and the inbox: %v", err)
	}
	pos := make([]int, len(sessions))
	var why []string
	var order []string
	var found *orderModel
	var walk func(m orderModel) bool
	walk = func(m orderModel) bool {
		done := true
		for s := range sessions {
			if pos[s] == len(sessions[s]) {
				continue
			}
			done = false
			a := sessions[s][pos[s]]
			want := om.expect(m, a.Event)
			var effects []bool
			switch {
			case uncertain(a):
				effects = []bool{false, true}
			case a.Err != nil || a.Outcome != want:
				if len(why) < 3 {
					why = append(why, fmt.Sprintf("%s%s: Process(%s) = %v, want %v", orderPrefix(order), a.Session, om.show(a.Event), a, want))
				}
				continue
			default:
				effects = []bool{true}
			}
			for _, took := range effects {
				next := m
				if took {
					next = om.record(m, a.Event)
				}
				pos[s]++
				order = append(order, a.Session)
				ok := walk(next)
				order = order[:len(order)-1]
				pos[s]--
				if ok {
					return true
				}
			}
		}
		if !done {
			return false
		}
		if d := om.diff(m, activations, inbox); d != "" {
			if len(why) < 3 {
				why = append(why, orderPrefix(order)+d)
			}
			return false
		}
		found = &m
		return true
	}
	walk(om.model().clone())
	if found == nil {
		om.fail(t, "no order of the payments explains what they answered and what the database holds: %s%s",
			strings.Join(why, "; "), indented(om.c.Transcript.From(mark)))
	}
	om.activated, om.seen = found.activated, found.seen
}

// read returns each order's activations and the inbox's events with their
// orders.
func (om *orderMachine) read() (map[string]int, map[lab.Key]string, error) {
	ctx := context.Background()
	activations := map[string]int{}
	rows, err := om.pool().QueryContext(ctx, `SELECT id, activations FROM orders`)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return nil, nil, err
		}
		activations[id] = n
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, err
	}
	inbox := map[lab.Key]string{}
	rows, err = om.pool().QueryContext(ctx, `SELECT source, event_id, order_id FROM inbox`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k lab.Key
		var order string
		if err := rows.Scan(&k.Source, &k.EventID, &order); err != nil {
			return nil, nil, err
		}
		if _, dup := inbox[k]; dup {
			order += " (twice)"
		}
		inbox[k] = order
	}
	return activations, inbox, rows.Err()
}

// diff describes how the orders and the inbox differ from m, or returns "".
func (om *orderMachine) diff(m orderModel, activations map[string]int, inbox map[lab.Key]string) string {
	var diffs []string
	for _, id := range om.env.orders {
		want := 0
		if m.activated[id] {
			want = 1
		}
		if activations[id] != want {
			diffs = append(diffs, fmt.Sprintf("activations of %s = %d, want %d", scenarios.ShowKey(id), activations[id], want))
		}
	}
	for _, k := range sortedKeys(m.seen) {
		want := om.env.payment(m.seen[k]).OrderID
		if got, ok := inbox[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("the inbox lacks %s/%s: every event is recorded as seen", scenarios.ShowKey(k.Source), scenarios.ShowKey(k.EventID)))
		} else if got != want {
			diffs = append(diffs, fmt.Sprintf("the inbox records %s/%s for %s, want %s", scenarios.ShowKey(k.Source), scenarios.ShowKey(k.EventID), scenarios.ShowKey(got), scenarios.ShowKey(want)))
		}
	}
	for _, k := range sortedKeys(inbox) {
		if _, ok := m.seen[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("the inbox records %s/%s, which was never paid", scenarios.ShowKey(k.Source), scenarios.ShowKey(k.EventID)))
		}
	}
	return strings.Join(diffs, "; ")
}

// An orderGuarantee is one of the businesskey check's stories: run tells
// it and returns its failures and transcript.
type orderGuarantee struct {
	name, shows string
	run         func(r *labtest.Run) (failures []string, story *labtest.Transcript)
}

// cell runs g against v as a cell of the lab (labtest.RunCell), as the
// matrix's scenarios run: deliveries that wait for each other on a Go lock
// of the handler's own are scheduled, and a cell that cannot go on (every
// delivery blocked, a panic, a wait outside the database) is stopped and
// told as g's failure, not a test binary that hangs. g tells its story on
// a child of the cell's run: the matrix's ledger invariants, which Close
// checks on the run's own databases, are not the exercise's. The cell,
// with g's verdict and story, is the check's report's too (for go run
// ./cmd/lab explain exercises/businesskey OneActivation). It returns g's
// verdict as a failure, and whether g held.
func (g orderGuarantee) cell(c *Checker, v lab.Variant) (Failure, bool) {
	useLabDefaults()
	var (
		mu    sync.Mutex
		told  bool
		lines []string
		story *labtest.Transcript
	)
	sc := labtest.Scenario{Name: g.name, Shows: g.shows, Run: func(r *labtest.Run) {
		l, st := g.run(r.Child())
		mu.Lock()
		defer mu.Unlock()
		told, lines, story = true, l, st
	}}
	cell := labtest.RunCell(c.T, sc, v)
	mu.Lock()
	defer mu.Unlock()
	if told && cell.Pass {
		cell.Pass, cell.Failures, cell.Where, cell.ByLab = len(lines) == 0, lines, make([]string, len(lines)), make([]bool, len(lines))
		if len(lines) > 0 {
			cell.Detail = lines[0]
		}
		if story != nil {
			cell.Lines, cell.Transcript = story.Lines(), story.String()
		}
	}
	// Else stopped (or failed by the lab itself) before g had a verdict:
	// the cell says why.
	c.ran = append(c.ran, ranCell{sc, v, cell})
	return Failure{Guarantee: g.name, Shows: g.shows, Lines: cell.Failures, Transcript: cell.Transcript}, cell.Pass
}

var oneActivation = orderGuarantee{
	name:  "OneActivation",
	shows: "order-42 paid as evt-1, as evt-2, evt-1 again, as evt-1 of provider-b; order-43 paid: each order activated once, every event recorded",
	run: func(r *labtest.Run) ([]string, *labtest.Transcript) {
		db := r.Open(labtest.Account{ID: 42}, labtest.Account{ID: 43})
		defer db.Pool().Close()
		for _, step := range []struct {
			e    lab.Event
			want lab.Outcome
		}{
			{pay("provider-a", "evt-1", 42, 500), lab.Applied},
			{pay("provider-a", "evt-2", 42, 500), lab.Duplicate},
			{pay("provider-a", "evt-1", 42, 500), lab.Duplicate},
			{pay("provider-b", "evt-1", 42, 500), lab.Duplicate},
			{pay("provider-a", "evt-3", 43, 700), lab.Applied},
		} {
			if a := db.Deliver(step.e, labtest.Delivery{Unchecked: true}); a.Err != nil || a.Outcome != step.want {
				r.Errorf("%s: Process(%+v) = %v, want %v", a.Session, payment(step.e), a, step.want)
			}
		}
		wantOrders(r, db, map[int64]int{42: 1, 43: 1},
			pay("provider-a", "evt-1", 42, 500), pay("provider-a", "evt-2", 42, 500),
			pay("provider-b", "evt-1", 42, 500), pay("provider-a", "evt-3", 43, 700))
		return r.Failures(), &r.Transcript
	},
}

// laterPauses are the times LaterPayments lets pass before each report
// of a payment again: a provider's retry, an hour, its retries over
// days, a person's resend from its dashboard weeks on.
var laterPauses = []time.Duration{time.Minute, time.Hour, 25 * time.Hour, 4 * 24 * time.Hour, 15 * 24 * time.Hour}

// laterPayments: order-42 paid as evt-1, then reported again under a new
// event id after each of laterPauses. The exercise's claim holds forever:
// every later report is a duplicate, and the order is activated once. The
// clock is the one the handler reads, the cell's bubble's
// (testing/synctest), which a sleep moves at once: nothing else runs
// between the payments.
var laterPayments = orderGuarantee{
	name:  "LaterPayments",
	shows: "order-42 paid as evt-1, then again as evt-2 … evt-6 a minute, an hour, 25 hours, 4 days and 15 days later: activated once",
	run: func(r *labtest.Run) ([]string, *labtest.Transcript) {
		db := r.Open(labtest.Account{ID: 42})
		defer db.Pool().Close()
		first := pay("provider-a", "evt-1", 42, 500)
		events := []lab.Event{first}
		if a := db.Deliver(first, labtest.Delivery{Unchecked: true}); a.Err != nil || a.Outcome != lab.Applied {
			r.Errorf("%s: Process(%+v) = %v, want %v", a.Session, payment(first), a, lab.Applied)
		}
		for i, d := range laterPauses {
			time.Sleep(d)
			r.Transcript.Note("", fmt.Sprintf("%s pass", d), "")
			e := pay("provider-a", fmt.Sprintf("evt-%d", i+2), 42, 500)
			events = append(events, e)
			if a := db.Deliver(e, labtest.Delivery{Unchecked: true}); a.Err != nil || a.Outcome != lab.Duplicate {
				r.Errorf("%s, %s after evt-1: Process(%+v) = %v, want %v", a.Session, d, payment(e), a, lab.Duplicate)
			}
		}
		wantOrders(r, db, map[int64]int{42: 1}, events...)
		return r.Failures(), &r.Transcript
	},
}

var orderRace = orderGuarantee{
	name:  "OrderRace",
	shows: "order-42 paid as evt-1 and as evt-2 at once, every interleaving: one activation, one applied and one duplicate, both events recorded",
	run: func(r *labtest.Run) ([]string, *labtest.Transcript) {
		e1, e2 := pay("provider-a", "evt-1", 42, 500), pay("provider-a", "evt-2", 42, 500)
		var failed []string
		var first, total int
		var transcript *labtest.Transcript
		var explore func(plan []string)
		explore = func(plan []string) {
			total++
			c := r.Child()
			db := c.Open(labtest.Account{ID: 42})
			var parked [][]string
			var chosen []string
			answers, schedule := db.Interleave(func(step int, p []string, robin string) string {
				name := robin
				if step < len(plan) {
					name = plan[step]
				}
				parked = append(parked, slices.Clone(p))
				chosen = append(chosen, name)
				return name
			}, []lab.Event{e1}, []lab.Event{e2})
			if applied, duplicate, errs := labtest.Count(answers); applied != 1 || duplicate != 1 || errs != 0 {
				c.Errorf("answers = %v, want one applied and one duplicate", answers)
			}
			wantOrders(c, db, map[int64]int{42: 1}, e1, e2)
			db.Pool().Close()
			if c.Failed() {
				if len(failed) == 0 {
					first = len(chosen)
					transcript = &c.Transcript
				}
				if len(chosen) < first {
					first, transcript = len(chosen), &c.Transcript
				}
				failed = append(failed, schedule+": "+c.Failures()[0])
			}
			for i := len(plan); i < len(chosen); i++ {
				for _, alt := range parked[i] {
					if alt != chosen[i] {
						explore(append(slices.Clone(chosen[:i]), alt))
					}
				}
			}
		}
		explore(nil)
		if len(failed) == 0 {
			return nil, nil
		}
		return append([]string{fmt.Sprintf("%d of %d interleavings break it; the first, %s", len(failed), total, failed[0])}, failed[1:]...), transcript
	},
}

var orderFaults = orderGuarantee{
	name:  "OrderFaults",
	shows: "an error before or after each statement of evt-1's delivery, then evt-1 retried and evt-2 delivered: order-42 activated once, both events recorded",
	run: func(r *labtest.Run) ([]string, *labtest.Transcript) {
		e1, e2 := pay("provider-a", "evt-1", 42, 500), pay("provider-a", "evt-2", 42, 500)
		var lines []string
		var transcript *labtest.Transcript
		for k := 1; ; k++ {
			fired := false
			for _, when := range []labtest.When{labtest.Before, labtest.After} {
				c := r.Child()
				db := c.Open(labtest.Account{ID: 42})
				f := db.Inject(labtest.Fault{When: when, N: k})
				a := db.Deliver(e1, labtest.Delivery{Unchecked: true})
				fired = fired || f.Fired() > 0
				db.Lift()
				if a.Err != nil {
					if a = db.Deliver(e1, labtest.Delivery{Unchecked: true}); a.Err != nil {
						c.Errorf("%s: the retry of %+v = %v, want applied or duplicate", a.Session, payment(e1), a)
					}
				}
				if a := db.Deliver(e2, labtest.Delivery{Unchecked: true}); a.Err != nil || a.Outcome != lab.Duplicate {
					c.Errorf("%s: Process(%+v) = %v, want duplicate", a.Session, payment(e2), a)
				}
				wantOrders(c, db, map[int64]int{42: 1}, e1, e2)
				db.Pool().Close()
				for _, l := range c.Failures() {
					lines = append(lines, fmt.Sprintf("fault %s statement %d: %s", when, k, l))
				}
				if c.Failed() && transcript == nil {
					transcript = &c.Transcript
				}
			}
			if !fired {
				return lines, transcript
			}
		}
	},
}

// wantOrders reports a failure unless each order was activated as often as
// want says, and the inbox records every event of seen.
func wantOrders(r *labtest.Run, db *labtest.DB, want map[int64]int, seen ...lab.Event) {
	for _, id := range slices.Sorted(maps.Keys(want)) {
		order := fmt.Sprintf("order-%d", id)
		var got int
		if err := db.Pool().QueryRow(`SELECT activations FROM orders WHERE id = $1`, order).Scan(&got); err != nil || got != want[id] {
			r.Errorf("activations of %s = %d (%v), want %d", order, got, err, want[id])
		}
	}
	for _, e := range seen {
		var n int
		if err := db.Pool().QueryRow(`SELECT count(*) FROM inbox WHERE source = $1 AND event_id = $2`, e.Source, e.EventID).Scan(&n); err != nil || n != 1 {
			r.Errorf("inbox rows for %s = %d (%v), want 1: every event is recorded as seen, also one whose operation was done before", e.Key(), n, err)
		}
	}
}

// TestOrderPairsCollide computes what orderPairs says of its pairs: two
// ids alike in their first n bytes, or hashed alike by FNV-1a 32 or CRC-32
// (IEEE), neither among storyOrders; and so are the receipt ids MailSearch
// makes of a pair, two sources of one event id (see alikeSources).
func TestOrderPairsCollide(t *testing.T) {
	fnv32 := func(s string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(s))
		return h.Sum32()
	}
	crc := func(s string) uint32 { return crc32.ChecksumIEEE([]byte(s)) }
	for _, p := range orderPairs[1:] {
		for _, id := range p {
			if len(id) > lab.MaxKeyBytes || slices.Contains(storyOrders, id) {
				t.Errorf("orderPairs holds %q, want at most %d bytes, not among storyOrders", id, lab.MaxKeyBytes)
			}
		}
		if p[0] == p[1] {
			t.Errorf("orderPairs holds %q twice, want two ids", p[0])
		}
	}
	receipt := func(source string) string {
		return outbox.Receipt(lab.Event{Source: source, EventID: "evt-1", AccountID: 1, Amount: 1}).ID
	}
	for _, form := range []func(string) string{func(id string) string { return id }, receipt} {
		pair := func(i int) [2]string { return [2]string{form(orderPairs[i][0]), form(orderPairs[i][1])} }
		for i, n := range []int{16, 16, 32, 64, lab.MaxKeyBytes - 1} {
			if p := pair(1 + i); p[0][:n] != p[1][:n] {
				t.Errorf("%q, %q: first %d bytes differ, want them one", p[0], p[1], n)
			}
		}
		if p := pair(6); fnv32(p[0]) != fnv32(p[1]) {
			t.Errorf("FNV-1a 32 of %q, %q = %d, %d, want one", p[0], p[1], fnv32(p[0]), fnv32(p[1]))
		}
		if p := pair(7); crc(p[0]) != crc(p[1]) {
			t.Errorf("CRC-32 of %q, %q = %d, %d, want one", p[0], p[1], crc(p[0]), crc(p[1]))
		}
	}
	if p := orderPairs[6]; fnv32(p[0]) != 4001749250 {
		t.Errorf("FNV-1a 32 of %q = %d, want 4001749250", p[0], fnv32(p[0]))
	}
	if p := orderPairs[7]; crc(p[0]) != 3829696261 {
		t.Errorf("CRC-32 of %q = %d, want 3829696261", p[0], crc(p[0]))
	}
	for _, p := range orderPairs[8:] {
		a, errA := strconv.ParseFloat(p[0], 64)
		b, errB := strconv.ParseFloat(p[1], 64)
		if errA != nil || errB != nil || a != b {
			t.Errorf("strconv.ParseFloat(%q), (%q) = %v (%v), %v (%v), want one number", p[0], p[1], a, errA, b, errB)
		}
	}
}
