package checks

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"pgregory.net/rapid"

	"idemlab/exercises/replay"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/scenarios"
)

// replayVariant is s as the lab sees a handler: its receipts' outcomes, so
// that the whole matrix runs on it.
func replayVariant(s replay.Service) lab.Variant { return receiptVariant(s, nil) }

// receiptVariant is replayVariant keeping, in got, every receipt s answers
// (none if got is nil). A table of receipts of the student's own, whether
// it references the inbox or not, is emptied with the inbox between the
// matrix's stories (see emptiedWithInbox).
func receiptVariant(s replay.Service, got *receipts) lab.Variant {
	return emptiedWithInbox(lab.Variant{Name: s.Name, Mistake: "an exercise", Schema: s.Schema, DSN: s.DSN,
		New: func(db *sql.DB) lab.Processor { return answering{s.New(db), got} }})
}

// answering adapts a replay.Processor to lab.Processor, keeping each
// receipt.
type answering struct {
	p   replay.Processor
	got *receipts
}

func (a answering) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	r, err := a.p.Process(ctx, e)
	if a.got != nil {
		a.got.add(e, r, err)
	}
	return r.Outcome, err
}

// receipts are the successful answers a check's deliveries got, per event.
type receipts struct {
	mu sync.Mutex
	by map[lab.Key][]replay.Receipt
}

func (g *receipts) add(e lab.Event, r replay.Receipt, err error) {
	if err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.by == nil {
		g.by = map[lab.Key][]replay.Receipt{}
	}
	g.by[e.Key()] = append(g.by[e.Key()], r)
}

func (g *receipts) of(e lab.Event) []replay.Receipt {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.by[e.Key()]
}

// Replay is the check of the replay exercise: FirstAnswer,
// AnswerSurvivesFaults and ReceiptAfterManyCredits, the whole matrix held
// to the correct standard, ReceiptSearch, then ProcessRestart (see
// restart_test.go).
//
// ReceiptSearch is the ledger property (see ledger_test.go) with every answer's
// receipt checked: 100 stories at -rapid.checks=100. Its dimensions:
//
//   - data, concurrency, pool shape and faults as every ledger property's,
//     the balances at and under the cap where a receipt's balance is
//     largest; deliveries of other events for the same account between a
//     credit and its repeat, and at once with it;
//   - restarts: a new handler on the same database, the pool's idle
//     connections closed so that a repeat meets another connection than
//     its first delivery's, the process killed at any statement (the
//     lab's kill: the process goes on, and so does what the handler's
//     package holds in its variables, which ProcessRestart's new process
//     does not keep);
//   - time: a receipt holds no instant (Receipt is an outcome and a
//     balance), and the handler is given none; if it reads time.Now (or
//     SQLite's localtime), it reads it in the process's time zone, a sixth
//     of the stories in each of six zones (see Search);
//   - the model: a credit's receipt says the balance right after it in the
//     order the deliveries took, every repeat's says the same as the first,
//     whatever happened in between;
//   - volume, which a story of a few dozen steps never reaches:
//     ReceiptAfterManyCredits repeats an event after receiptVolume other
//     credits.
func Replay(c *Checker, s replay.Service) {
	got := &receipts{}
	v := receiptVariant(s, got)
	c.Scenario(firstAnswer(s, got), v)
	c.Scenario(answerSurvivesFaults(got), v)
	c.Scenario(receiptAfterManyCredits(s, got), v)
	c.Matrix(replayVariant(s), nil)
	book := &receiptBook{by: map[string][]replay.Receipt{}}
	env := &ledgerEnv{newInner: func(db *sql.DB) lab.Processor { return receiptKeeper{s.New(db), book} }}
	spec := &ledgerSpec{
		propertySpec: propertySpec{exercise: "replay", name: "ReceiptSearch", stories: 100,
			shows: "rapid's stories of credits, repeats, restarts, new connections, faults and crashes, at once or one by one: every repeat gets its first receipt, every credit the balance right after it"},
		env: env,
		weights: map[string]int{"New": 3, "Repeat": 3, "Changed": 1, "Twin": 1, "Missing": 1, "Invalid": 1, "Refused": 1, "MisCredit": 1,
			"Fault": 2, "Crash": 2, "Race": 4, "FaultRace": 2, "Reconnect": 2, "Lost": 1, "Restart": 2},
		hooks: ledgerHooks{begin: func(*ledgerMachine, *rapid.T) { book.reset() }, answerWrong: book.wrong},
	}
	c.Search(spec.property(), env.variant(replayVariant(s)))
	processRestart(c, s)
}

// receiptBook keeps every receipt ReceiptSearch's handler answers, by
// session, in order. It is made empty, not nil: the lab may run the
// handler before the first story resets it (its probe for Go locks).
type receiptBook struct {
	mu sync.Mutex
	by map[string][]replay.Receipt
}

func (b *receiptBook) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.by = map[string][]replay.Receipt{}
}

// receiptKeeper is a replay handler as the lab sees one, keeping every
// receipt it answers in its book, by session.
type receiptKeeper struct {
	p    replay.Processor
	book *receiptBook
}

func (k receiptKeeper) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	r, err := k.p.Process(ctx, e)
	k.book.mu.Lock()
	s := labtest.SessionOf(ctx)
	k.book.by[s] = append(k.book.by[s], r)
	k.book.mu.Unlock()
	return r.Outcome, err
}

// wrong checks the receipt of the i-th answer of its session, a success
// the model expects (want): a credit's says the balance right after it, a
// repeat's the first delivery's.
func (b *receiptBook) wrong(_ *ledgerMachine, m *ledgerModel, a labtest.Answer, i int, want lab.Outcome) string {
	b.mu.Lock()
	rs := b.by[a.Session]
	b.mu.Unlock()
	if i >= len(rs) {
		return fmt.Sprintf("%s: Process(%s) answered no receipt", a.Session, scenarios.ShowEvent(a.Event))
	}
	r := rs[i]
	wantBalance := m.receipt[a.Event.Key()]
	first := "the first delivery's receipt"
	if want == lab.Applied {
		wantBalance = m.balances[a.Event.AccountID] + a.Event.Amount
		first = "the balance right after its credit"
	}
	if r.Outcome != want || r.Balance != wantBalance {
		return fmt.Sprintf("%s: Process(%s) = %+v, want %+v, %s", a.Session, scenarios.ShowEvent(a.Event), r,
			replay.Receipt{Outcome: want, Balance: wantBalance}, first)
	}
	return ""
}

var (
	evt1 = lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	evt2 = lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 300}
)

// firstAnswer: evt-1 and then evt-2 credit account 1, and each repeat gets
// its own first receipt back, whatever the balance is now — also from a
// new handler on the same database, as after a restart of the service.
func firstAnswer(s replay.Service, got *receipts) labtest.Scenario {
	return labtest.Scenario{
		Name:  "FirstAnswer",
		Shows: "evt-1, evt-2, then each repeated, before and after a restart: every repeat gets the receipt of its first delivery",
		Run: func(r *labtest.Run) {
			db := r.Open()
			for _, step := range []struct {
				e    lab.Event
				want replay.Receipt
			}{
				{evt1, replay.Receipt{Outcome: lab.Applied, Balance: 500}},
				{evt2, replay.Receipt{Outcome: lab.Applied, Balance: 800}},
				{evt1, replay.Receipt{Outcome: lab.Duplicate, Balance: 500}},
				{evt2, replay.Receipt{Outcome: lab.Duplicate, Balance: 800}},
			} {
				n := len(got.of(step.e))
				a := db.Deliver(step.e)
				if rs := got.of(step.e); a.Err != nil || len(rs) == n || rs[n] != step.want {
					r.Errorf("%s: Process(%v) = %s, want %+v", a.Session, step.e, describe(a, rs, n), step.want)
				}
			}
			restarted := s.New(db.Pool())
			for _, want := range []struct {
				e    lab.Event
				want replay.Receipt
			}{{evt1, replay.Receipt{Outcome: lab.Duplicate, Balance: 500}}, {evt2, replay.Receipt{Outcome: lab.Duplicate, Balance: 800}}} {
				if got, err := restarted.Process(context.Background(), want.e); err != nil || got != want.want {
					r.Errorf("after a restart (a new handler on the same database): Process(%v) = %+v, %v, want %+v", want.e, got, err, want.want)
				}
			}
		},
	}
}

// receiptVolume is how many other events ReceiptAfterManyCredits credits
// between an event and its repeat: past the round numbers a handler that
// keeps only recent answers might keep (1,000, 1,024), in seconds. A
// handler that keeps more (10,000) passes it.
const receiptVolume = 1_500

// receiptAfterManyCredits: evt-1 credits account 1; receiptVolume other
// events credit it too, one after another; evt-1's repeat still gets
// its first receipt. A handler that keeps only the answers of recent
// events, since providers retry within hours, answers an older repeat with
// the balance as it is now. The other credits go through a handler of
// their own on a pool of the variant's DSN, outside the lab's hooks (the
// volume is the question here, not the interleaving), but for one in a
// hundred, delivered through the lab.
func receiptAfterManyCredits(s replay.Service, got *receipts) labtest.Scenario {
	return labtest.Scenario{
		Name:  "ReceiptAfterManyCredits",
		Shows: fmt.Sprintf("evt-1, then %d other events, then evt-1 again: the repeat gets evt-1's first receipt, however many answers came after it", receiptVolume),
		Run: func(r *labtest.Run) {
			db := r.Open()
			want := replay.Receipt{Outcome: lab.Applied, Balance: 500}
			if a := db.Deliver(evt1); a.Err != nil || len(got.of(evt1)) == 0 || got.of(evt1)[0] != want {
				r.Errorf("%s: Process(%v) = %s, want %+v", a.Session, evt1, describe(a, got.of(evt1), 0), want)
				return
			}
			pool, err := openDSN(r.Variant.DSN(db.Path))
			if err != nil {
				r.Errorf("opening a second pool with the variant's DSN: %v", err)
				return
			}
			defer pool.Close()
			h := s.New(pool)
			for i := range receiptVolume {
				e := lab.Event{Source: "provider-b", EventID: fmt.Sprintf("bulk-%d", i+1), AccountID: 1, Amount: 1}
				want := replay.Receipt{Outcome: lab.Applied, Balance: int64(500 + i + 1)}
				if i%100 == 99 {
					// One in a hundred through the lab: the statements it
					// counts are the cell's sign of life (cellStuckAfter),
					// however slow the machine.
					if a := db.Deliver(e); a.Err != nil || len(got.of(e)) == 0 || got.of(e)[0] != want {
						r.Errorf("%s: Process(%v) (other credit %d of %d) = %s, want %+v", a.Session, e, i+1, receiptVolume, describe(a, got.of(e), 0), want)
						return
					}
					continue
				}
				if rc, err := h.Process(context.Background(), e); err != nil || rc != want {
					r.Errorf("Process(%v) (other credit %d of %d) = %+v, %v, want %+v", e, i+1, receiptVolume, rc, err, want)
					return
				}
			}
			n := len(got.of(evt1))
			want = replay.Receipt{Outcome: lab.Duplicate, Balance: 500}
			if a := db.Deliver(evt1); a.Err != nil || len(got.of(evt1)) == n || got.of(evt1)[n] != want {
				r.Errorf("%s: Process(%v) after %d other credits = %s, want %+v, its first receipt", a.Session, evt1, receiptVolume,
					describe(a, got.of(evt1), n), want)
			}
		},
	}
}

// answerSurvivesFaults: the first answer must be stored in the credit's own
// transaction. evt-1 is applied, then evt-2's first delivery meets an
// injected error before or after each of its statements in turn; it is
// redelivered until it succeeds, and once more. Whatever the fault, every
// receipt evt-2 gets says 800, the balance right after its credit.
func answerSurvivesFaults(got *receipts) labtest.Scenario {
	return labtest.Scenario{
		Name:  "AnswerSurvivesFaults",
		Shows: "an error before or after any statement of the first delivery: every later receipt still tells the balance right after the credit",
		Run: func(r *labtest.Run) {
			for k := 1; ; k++ {
				fired := false
				for _, when := range []labtest.When{labtest.Before, labtest.After} {
					r.Case(fmt.Sprintf("fault %s statement %d", when, k), func(c *labtest.Run) {
						db := c.Open()
						c.WantOutcome(db.Deliver(evt1), lab.Applied)
						f := db.Inject(labtest.Fault{When: when, N: k, Session: "B"})
						n := len(got.of(evt2))
						db.Deliver(evt2, labtest.Delivery{Unchecked: true})
						fired = fired || f.Fired() > 0
						db.Lift()
						for range 2 {
							a := db.Deliver(evt2)
							rs := got.of(evt2)
							if a.Err != nil || len(rs) == n || rs[len(rs)-1].Balance != 800 {
								c.Errorf("%s: Process(%v) after the fault = %s, want the balance right after its credit, 800", a.Session, evt2, describe(a, rs, len(rs)-1))
							}
							n = len(rs)
						}
					})
				}
				if !fired {
					return
				}
			}
		},
	}
}

// describe renders the answer to a delivery with its receipt, if any.
func describe(a labtest.Answer, rs []replay.Receipt, i int) string {
	if a.Err != nil || i < 0 || i >= len(rs) {
		return a.String()
	}
	return fmt.Sprintf("%+v", rs[i])
}
