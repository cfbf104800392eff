package checks

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"pgregory.net/rapid"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/scenarios"
)

// The ledger property: the search of every exercise whose handler keeps a
// ledger (accounts and an inbox) — the five repairs, replay, retention and
// outbox. Its stories draw, each on a fresh database:
//
//   - data: event ids and sources that mix case, hold multi-byte runes,
//     separators ('/', ':', '|', tabs, control characters such as the
//     unit separator: keySeparators) and spaces, or are exactly 128 bytes
//     long; twins
//     of known keys (another case, another source, the same characters split
//     elsewhere between source and id, a trailing space), each another event;
//     amounts of 1 and at the cap, on balances at, just under and far from
//     the balance cap; events for a missing account, and events Validate
//     refuses; values a bug hands to one statement only (the INSERT's amount
//     0, negative, over the cap or fractional, its source empty or NULL, its
//     event id too long, its account missing; the credit's account missing),
//     on a new event or a repeat;
//   - concurrency: two or three deliveries (each session one or two events)
//     interleaved at every statement by a schedule rapid draws, also at the
//     caps, with the exercise's background jobs among them;
//   - pool shape: one connection, two, or as many as the handler opens, and
//     the pool's idle connections closed mid-story, or a connection lost
//     under a BEGIN (driver.ErrBadConn: database/sql begins again on another
//     or a new one), so that a setting made on one connection meets a new
//     one; a restart (a new handler on the same pool);
//   - faults: an error before or after any statement of a delivery or a
//     job, one-shot, alone or in a race (an answer to it must not blame
//     the event: see judge); a crash (the process killed) before
//     or after any statement, then the service restarted;
//   - time zone: the process's, a sixth of the stories in each of six
//     (see Search), for a handler that is given no clock and reads one
//     (time.Now, SQLite's localtime) all the same.
//
// After every step the answers and the database must be those of the model:
// for deliveries at once, of some order of them, each delivery that failed
// having taken effect entirely or not at all.

// jobSource is the source of the events that stand for a background job
// (a purge, a relay) run on a session of its own, so that the scheduler
// interleaves its statements with deliveries and faults and crashes reach
// it. The adapter runs the job instead of the handler; its answer is an
// error, errJobDone when it finished.
const jobSource = "(job)"

// errJobDone is a job's answer when it finished without error.
var errJobDone = errors.New("the job ran (not a delivery)")

// errKilledStory stands for the answer a killed delivery never gave.
var errKilledStory = errors.New("the process was killed before it answered")

// errAnyError is a model's expectation that a delivery fails, whatever the
// kind of its error.
var errAnyError = errors.New("an error")

// busyTimeout is the busy timeout of every exercise's DSN: a delivery that
// waited it out may answer busy under contention (see Concurrent).
const busyTimeout = 5 * time.Second

// ledgerEnv is what a ledger property's variant shares with its stories:
// the pool and handler of the story under way, its shape, its clock, and
// the exercise's jobs. One per check; each story resets it.
type ledgerEnv struct {
	mu       sync.Mutex
	shape    poolShape
	pool     *sql.DB
	newInner func(db *sql.DB) lab.Processor // the exercise's handler, as the lab sees one
	inner    lab.Processor
	db       *labtest.DB
	now      time.Time // the story's clock, for an exercise that has one
	// runJob runs the job a job event names (see jobSource), on the
	// handler's pool; nil for an exercise without jobs.
	runJob func(ctx context.Context, pool *sql.DB, e lab.Event) error
}

// variant is the variant whose handler the env runs: v's schema and DSN,
// the env's handler on top.
func (env *ledgerEnv) variant(v lab.Variant) lab.Variant {
	return lab.Variant{Name: v.Name, Mistake: v.Mistake, Schema: v.Schema, DSN: v.DSN,
		New: func(db *sql.DB) lab.Processor {
			env.mu.Lock()
			defer env.mu.Unlock()
			env.pool = db
			db.SetMaxOpenConns(int(env.shape))
			env.inner = env.newInner(db)
			return envProcessor{env}
		}}
}

// restart puts a new handler on the same pool, as a restarted service's.
func (env *ledgerEnv) restart() {
	env.mu.Lock()
	defer env.mu.Unlock()
	env.inner = env.newInner(env.pool)
}

// clock returns the clock's time.
func (env *ledgerEnv) clock() time.Time {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.now
}

// envProcessor runs a delivery on the env's handler, or a job event's job.
type envProcessor struct{ env *ledgerEnv }

func (p envProcessor) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	env := p.env
	env.mu.Lock()
	inner, pool := env.inner, env.pool
	env.mu.Unlock()
	if e.Source != jobSource {
		return inner.Process(ctx, e)
	}
	if err := env.runJob(ctx, pool, e); err != nil {
		return 0, fmt.Errorf("%s: %w", e.EventID, err)
	}
	return 0, errJobDone
}

// job is the event that stands for a run of the named job: its event id
// is the job's name, and may go on after a space ("purge 2").
func job(name string) lab.Event { return lab.Event{Source: jobSource, EventID: name} }

// jobName is the name of the job e stands for.
func jobName(e lab.Event) string {
	name, _, _ := strings.Cut(e.EventID, " ")
	return name
}

// isJob reports whether a answers a job rather than a delivery.
func isJob(a labtest.Answer) bool { return a.Event.Source == jobSource }

// ledgerSpec is one exercise's ledger property.
type ledgerSpec struct {
	propertySpec
	env *ledgerEnv
	// weights are how often each step is drawn, by name (see actions, and
	// steps); a step not named is never drawn.
	weights map[string]int
	// steps are the exercise's own steps, by name.
	steps map[string]func(lm *ledgerMachine, t *rapid.T)
	// orphan: a story may start from an inbox row whose account was
	// deleted (see orphanRow).
	orphan bool
	// window, if not zero, puts the story on a clock (the env's), and is
	// how long after its first delivery a provider may send an event again:
	// redeliveries come only within it.
	window time.Duration
	// jobs are the exercise's background jobs a race may run, by name.
	jobs  []string
	hooks ledgerHooks
}

// ledgerHooks are what an exercise adds to a ledger story; each may be nil.
type ledgerHooks struct {
	// begin draws what the story starts from besides the ledger (a clock,
	// a mailbox) and tells it, before the database opens.
	begin func(lm *ledgerMachine, t *rapid.T)
	// opened is told the story's database.
	opened func(lm *ledgerMachine)
	// finish ends the story, before its database closes (the relay sends
	// what is left).
	finish func(lm *ledgerMachine, t *rapid.T)
	// invariant says what is wrong after a step beside the ledger, or "".
	invariant func(lm *ledgerMachine) string
	// answerWrong says what is wrong with the i-th answer of its session,
	// a success the model expects (want), beyond its outcome, or "".
	answerWrong func(lm *ledgerMachine, m *ledgerModel, a labtest.Answer, i int, want lab.Outcome) string
	// dieAt is told that the next delivery is killed at its statement n (0:
	// the crash is over), for what a dead process must no longer do.
	dieAt func(n int)
	// raceJob prepares a run of the named job in a race and describes it.
	raceJob func(lm *ledgerMachine, t *rapid.T, name string) string
	// settleJobs settles the jobs that ran in a step: nil when they leave
	// the ledger alone.
	settleJobs func(lm *ledgerMachine, jobs []labtest.Answer) jobSettler
}

// A jobSettler settles what background jobs did to the ledger in a step.
type jobSettler interface {
	// wrong says what the jobs got wrong, given m, the model after the
	// step's deliveries, and the database after the step.
	wrong(m *ledgerModel, got ledgerState) []string
	// settle is m after the jobs, as far as the database tells.
	settle(m *ledgerModel, got ledgerState) *ledgerModel
	// after says what the jobs said wrong about what they did, given the
	// database before the step, or "".
	after(lm *ledgerMachine, before ledgerState) string
}

// property returns spec as a search of its check (see Checker.Search).
func (spec *ledgerSpec) property() propertySpec {
	spec.story = spec.tell
	return spec.propertySpec
}

// The balances a story's two accounts start from: empty, and at, under
// and far under the balance cap, where one credit fits and two do not.
var storyBalances = []int64{0, 1000, lab.MaxBalance - 2*lab.MaxAmount + 1, lab.MaxBalance - lab.MaxAmount,
	lab.MaxBalance - lab.MaxAmount + 1, lab.MaxBalance - 1, lab.MaxBalance}

// The amounts a story's events carry: the smallest, small, and at the cap.
var storyAmounts = []int64{1, 2, 3, 7, 500, lab.MaxAmount - 1, lab.MaxAmount}

// orphanRow is the inbox row a story may start from (ledgerSpec.orphan):
// an event applied before its account, 3, was deleted on a connection
// without foreign keys, where SQLite enforces none. It credits no account
// now; a handler that refuses every event while the inbox holds such a
// row (pragma_foreign_key_check of the whole table) refuses them all.
var orphanRow = lab.Event{Source: "provider-a", EventID: "evt-0", AccountID: 3, Amount: 500}

// missingAccount is the account no story's database has.
const missingAccount = 99

// storySources are the sources a story draws from: the lab's two, one
// that differs from them only by case, by a prefix, by accents, in another
// script, with separators, and one of exactly 128 bytes.
var storySources = []string{"provider-a", "provider-b", "Provider-A", "provider-ab", "prövider-ä", "供应商",
	"acme:eu", "acme/eu", exactly(lab.MaxKeyBytes, "src-", "€")}

// exactly returns prefix filled with fill, then 'x', to exactly n bytes.
func exactly(n int, prefix, fill string) string {
	s := prefix
	for len(s)+len(fill) <= n {
		s += fill
	}
	return s + strings.Repeat("x", n-len(s))
}

// ledgerMachine is one story of a ledger property.
type ledgerMachine struct {
	spec  *ledgerSpec
	env   *ledgerEnv
	c     *labtest.Run
	db    *labtest.DB
	m     *ledgerModel
	story *story
	next  int
	jobs  map[string]string // how the story tells each job a race runs, by its event id
}

// tell tells one story.
func (spec *ledgerSpec) tell(c *labtest.Run, t *rapid.T) {
	env := spec.env
	lm := &ledgerMachine{spec: spec, env: env, c: c, story: &story{}, jobs: map[string]string{}}
	shape := drawShape(t)
	b1 := rapid.SampledFrom(storyBalances).Draw(t, "balance of account 1")
	b2 := rapid.SampledFrom(storyBalances).Draw(t, "balance of account 2")
	env.mu.Lock()
	env.shape = shape
	env.mu.Unlock()
	lm.story.setup("%s; account 1 holds %d, account 2 holds %d, account %d does not exist", shape, b1, b2, missingAccount)
	if spec.hooks.begin != nil {
		spec.hooks.begin(lm, t)
	}
	lm.db = c.OpenScheduled(labtest.Account{ID: 1, Balance: b1}, labtest.Account{ID: 2, Balance: b2})
	closed := false
	defer func() {
		if !closed { // a broken story: its database goes, its verdict is told
			c.Close()
		}
	}()
	env.mu.Lock()
	env.db = lm.db
	env.mu.Unlock()
	if spec.hooks.opened != nil {
		spec.hooks.opened(lm)
	}
	lm.m = &ledgerModel{stored: map[lab.Key]lab.Event{}, balances: map[int64]int64{1: b1, 2: b2},
		receipt: map[lab.Key]int64{}, arrived: map[lab.Key]time.Time{}, ever: map[lab.Key]bool{}}
	if spec.orphan && rapid.Bool().Draw(t, "an orphan row") {
		lm.db.LeaveOrphan(orphanRow)
		lm.m.stored[orphanRow.Key()], lm.m.ever[orphanRow.Key()] = orphanRow, true
		lm.story.add("the inbox holds %s from before: account %d was closed and deleted since, with foreign keys off",
			scenarios.ShowEvent(orphanRow), orphanRow.AccountID)
	}

	actions := map[string]func(*rapid.T){"": lm.check}
	all := lm.actions()
	for name, step := range spec.steps {
		all[name] = func(t *rapid.T) { step(lm, t) }
	}
	for name, w := range spec.weights {
		if all[name] == nil {
			c.Errorf("%s: no step %q", spec.name, name)
			return
		}
		for i := range w {
			actions[fmt.Sprintf("%s#%d", name, i)] = all[name]
		}
	}
	t.Repeat(actions)
	if spec.hooks.finish != nil {
		spec.hooks.finish(lm, t)
	}
	closed = true
	c.Close()
	if fs := c.Failures(); len(fs) > 0 {
		lm.fail(t, "after the story, the lab found: %s", strings.Join(fs, "; "))
	}
}

// actions are the steps every ledger story may draw from, by name.
func (lm *ledgerMachine) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"New": lm.New, "Repeat": lm.Repeat, "Changed": lm.Changed, "Twin": lm.Twin,
		"Missing": lm.Missing, "Invalid": lm.Invalid, "Refused": lm.Refused, "MisCredit": lm.MisCredit,
		"Fault": lm.Fault, "Crash": lm.Crash, "Race": lm.Race, "FaultRace": lm.FaultRace, "Reconnect": lm.Reconnect, "Restart": lm.Restart,
		"Lost": lm.Lost, "TailTwins": lm.TailTwins, "AlikeSources": func(t *rapid.T) { alikeSources(lm, t) },
		"PatternTwin": lm.PatternTwin,
	}
}

// PatternTwin delivers a twin of a known key whose id or source is a GLOB
// or LIKE pattern of the known one's (evt-? for evt-1: wildcardsOf):
// another event, which a lookup of the stored payload by GLOB or LIKE
// takes, at its repeat, for the known one.
func (lm *ledgerMachine) PatternTwin(t *rapid.T) {
	lm.deliver(t, "deliver a twin", lm.twinOf(t, lm.known(t), "wildcard"))
}

// alikeSources delivers one new event id from the two sources of a pair
// of OrderSearch's orders alike (orderPairs): two events whose sources,
// and whose receipt ids (source/event_id), share their first 16, 32, 64
// or 127 bytes, or their FNV-1a 32 (which keeps a collision under a
// suffix both strings share) or their CRC-32 (which keeps one of two
// strings of one length under a prefix and a suffix both share), as
// TestOrderPairsCollide computes. A key that keeps the source by a few
// bytes of it or by a 32-bit hash, or a mailbox that so remembers an id,
// takes the second for the first.
func alikeSources(lm *ledgerMachine, t *rapid.T) {
	pair := rapid.SampledFrom(orderPairs[1:]).Draw(t, "two sources alike")
	e := lm.fresh(t)
	for k := 1; lm.m.ever[lab.Key{Source: pair[0], EventID: e.EventID}] || lm.m.ever[lab.Key{Source: pair[1], EventID: e.EventID}]; k++ {
		e.EventID = fmt.Sprintf("evt-%d~%d", lm.next, k) // an earlier pair took it
	}
	for _, source := range pair {
		e.Source = source
		lm.deliver(t, "deliver from a source alike", e)
	}
}

// fail ends the story with what went wrong and the story so far.
func (lm *ledgerMachine) fail(t *rapid.T, format string, args ...any) {
	t.Fatalf("%s\n\nthe story:\n%s", fmt.Sprintf(format, args...), lm.story)
}

// check is the invariant rapid runs after every step: the lab saw nothing
// wrong (a call without the delivery's context, a transaction left open, a
// panic), nor did the exercise's own invariant.
func (lm *ledgerMachine) check(t *rapid.T) {
	if fs := lm.c.Failures(); len(fs) > 0 {
		lm.fail(t, "%s", fs[0])
	}
	if lm.spec.hooks.invariant != nil {
		if why := lm.spec.hooks.invariant(lm); why != "" {
			lm.fail(t, "%s", why)
		}
	}
}

// New delivers an event never seen before.
func (lm *ledgerMachine) New(t *rapid.T) { lm.deliver(t, "deliver", lm.fresh(t)) }

// Repeat delivers a known event again.
func (lm *ledgerMachine) Repeat(t *rapid.T) { lm.deliver(t, "redeliver", lm.known(t)) }

// Changed delivers a known key with another account or amount.
func (lm *ledgerMachine) Changed(t *rapid.T) {
	lm.deliver(t, "redeliver with another payload", lm.changed(t))
}

// Twin delivers an event whose key is a twin of a known one: another
// event; or, one time in eight, a twin split around each separator of a
// known key, one after another (see twinsAtEach).
func (lm *ledgerMachine) Twin(t *rapid.T) {
	if rapid.IntRange(0, 7).Draw(t, "twins at each separator") > 0 {
		lm.deliver(t, "deliver a twin", lm.twin(t))
		return
	}
	for _, k := range lm.twinsAtEach(t) {
		lm.deliver(t, "deliver a twin", lm.event(t, k))
	}
}

// Missing delivers a new event for an account that does not exist.
func (lm *ledgerMachine) Missing(t *rapid.T) {
	e := lm.fresh(t)
	e.AccountID = missingAccount
	lm.deliver(t, "deliver to a missing account", e)
}

// Invalid delivers an event that Validate refuses, just past a limit.
func (lm *ledgerMachine) Invalid(t *rapid.T) {
	e := lm.fresh(t)
	switch rapid.IntRange(0, 4).Draw(t, "what is invalid") {
	case 0:
		e.EventID = exactly(lab.MaxKeyBytes+1, "evt-", "€") // 129 bytes, fewer runes
	case 1:
		e.Amount = 0
	case 2:
		e.Amount = -e.Amount
	case 3:
		e.Amount = lab.MaxAmount + 1
	case 4:
		e.Source = ""
	}
	lm.deliver(t, "deliver an invalid event", e)
}

// deliver delivers e and settles its answer with the model.
func (lm *ledgerMachine) deliver(t *rapid.T, what string, e lab.Event) {
	mark := lm.c.Transcript.Len()
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.story.add("%s %s: %v", what, scenarios.ShowEvent(e), a)
	lm.settle(t, [][]labtest.Answer{{a}}, mark, nil)
}

// A column rewrite is a bug between validation and the database that hands
// one statement another value than the event's.
type columnRewrite struct {
	what     string // "the INSERT's amount 0"
	old, new func(e lab.Event) any
	// refused: the schema refuses the row whatever the event (a CHECK, a
	// NOT NULL, a STRICT type); else the value is a missing account, which
	// the foreign key refuses only on a row it inserts.
	refused bool
}

var insertRewrites = []columnRewrite{
	{"the INSERT's amount 0", amountOf, constantValue(int64(0)), true},
	{"the INSERT's amount negative", amountOf, func(e lab.Event) any { return -e.Amount }, true},
	{"the INSERT's amount over the cap", amountOf, constantValue(int64(lab.MaxAmount + 1)), true},
	{"the INSERT's amount fractional", amountOf, constantValue(2.5), true},
	{"the INSERT's source empty", sourceOf, constantValue(""), true},
	{"the INSERT's source NULL", sourceOf, constantValue(nil), true},
	// 129 characters: the schema's CHECK counts characters (length()),
	// where Validate counts bytes.
	{"the INSERT's event id 129 characters", idOf, constantValue(strings.Repeat("x", lab.MaxKeyBytes+1)), true},
	{"the INSERT's account missing", accountOf, constantValue(int64(missingAccount)), false},
	{"the INSERT's account 0", accountOf, constantValue(int64(0)), false},
}

func amountOf(e lab.Event) any  { return e.Amount }
func sourceOf(e lab.Event) any  { return e.Source }
func idOf(e lab.Event) any      { return e.EventID }
func accountOf(e lab.Event) any { return e.AccountID }
func constantValue(v any) func(lab.Event) any {
	return func(lab.Event) any { return v }
}

// replaceValue returns a rewrite that replaces every argument equal to old
// with new.
func replaceValue(old, new any) func(args []driver.NamedValue) {
	return func(args []driver.NamedValue) {
		for i := range args {
			if args[i].Value == old {
				args[i].Value = new
			}
		}
	}
}

// Refused delivers a new event or a repeat whose INSERT into the inbox a bug
// hands a value of one column the schema must refuse: every such row is an
// error of its kind (invalid event; unknown account for a missing account on
// a row the INSERT would add), and nothing is written. A repeat whose
// INSERT adds no row is not refused by the foreign key: it is answered as
// without the bug.
func (lm *ledgerMachine) Refused(t *rapid.T) {
	e := lm.newOrKnown(t)
	if e.Source == e.EventID || e.AccountID == e.Amount {
		t.SkipNow() // two columns alike: a rewrite of one would hit both
	}
	rw := rapid.SampledFrom(insertRewrites).Draw(t, "rewrite")
	what := fmt.Sprintf("deliver %s with %s", scenarios.ShowEvent(e), rw.what)
	var lost *labtest.Fault
	if rapid.Bool().Draw(t, "the connection lost at BEGIN") {
		lost = lm.loseConnection()
	}
	f := lm.db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpInsert, Table: "inbox",
		Rewrite: replaceValue(rw.old(e), rw.new(e))})
	mark := lm.c.Transcript.Len()
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.db.Lift()
	fired := f.Fired()
	if fired == 0 && lm.settleLost(t, what, a, lost, mark) {
		return // it failed at BEGIN, before any INSERT
	}
	if lost != nil {
		what += ", its connection lost under its BEGIN"
	}
	lm.story.add("%s: %v", what, a)
	if fired == 0 {
		lm.settle(t, [][]labtest.Answer{{a}}, mark, nil) // the handler runs no INSERT for it
		return
	}
	want, wantErr := lm.m.expect(e)
	_, stored := lm.m.stored[e.Key()]
	switch {
	case rw.refused:
		want, wantErr = 0, lab.ErrInvalidEvent
	case !stored: // the INSERT would add the row: the foreign key refuses it
		want, wantErr = 0, lab.ErrUnknownAccount
	}
	lm.expectOne(t, a, want, wantErr, mark)
}

// Lost delivers an event whose BEGIN finds its connection gone (the
// driver says driver.ErrBadConn, as for a connection the server closed):
// database/sql discards it and begins again on another, or a new one, which
// has only the settings the DSN gives every connection. A handler that
// began on a connection of its own (db.Conn) gets the error instead, and
// may answer it (see settleLost).
func (lm *ledgerMachine) Lost(t *rapid.T) {
	e := lm.newOrKnown(t)
	what := "deliver " + scenarios.ShowEvent(e)
	lost := lm.loseConnection()
	mark := lm.c.Transcript.Len()
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.db.Lift()
	if lm.settleLost(t, what, a, lost, mark) {
		return
	}
	lm.story.add("%s, its connection lost under its BEGIN: %v", what, a)
	lm.settle(t, [][]labtest.Answer{{a}}, mark, nil)
}

// errLostByLab is the error of a BEGIN whose connection the lab broke:
// driver.ErrBadConn, which database/sql reads as a dead connection, said
// to be the lab's doing, so that a handler that passes it up shows who
// broke what.
var errLostByLab = fmt.Errorf("the lab broke this connection under BEGIN, as a server that closed it would (an injected fault): %w", driver.ErrBadConn)

// loseConnection makes the next BEGIN's connection fail as a dead one
// does: driver.ErrBadConn, before it runs. database/sql closes that
// connection and runs the BEGIN again on another; on a connection the
// handler holds (db.Conn) the error is the handler's.
func (lm *ledgerMachine) loseConnection() *labtest.Fault {
	return lm.db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpBegin, Err: errLostByLab})
}

// settleLost settles a delivery whose connection the lab broke under its
// BEGIN (lost fired) and that answered an error, and reports whether it
// did; what tells the delivery. An error with nothing written is a safe
// answer: the provider delivers the event again, and that delivery, on a
// connection the lab leaves alone, must do what the model says (apply a
// new event). So the error may be of any kind, the database must be as
// before, and the redelivery follows at once. A handler that gave up on
// such a connection for good fails there.
func (lm *ledgerMachine) settleLost(t *rapid.T, what string, a labtest.Answer, lost *labtest.Fault, mark int) bool {
	if lost == nil || lost.Fired() == 0 || a.Err == nil {
		return false
	}
	lm.story.add("%s, its connection lost under its BEGIN: %v (an error that wrote nothing: the provider retries)", what, a)
	lm.expectOne(t, a, 0, errAnyError, mark)
	lm.deliver(t, "redeliver", a.Event)
	return true
}

// MisCredit delivers a new event whose credit a bug hands a missing
// account: the handler must not answer success for a credit that went
// nowhere, and nothing is written.
func (lm *ledgerMachine) MisCredit(t *rapid.T) {
	e := lm.fresh(t)
	if e.Amount == e.AccountID {
		t.SkipNow() // amount and account alike: a rewrite of one would hit both
	}
	f := lm.db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpUpdate, Table: "accounts",
		Rewrite: replaceValue(e.AccountID, int64(missingAccount))})
	mark := lm.c.Transcript.Len()
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.db.Lift()
	lm.story.add("deliver %s with the credit's account missing: %v", scenarios.ShowEvent(e), a)
	if f.Fired() == 0 {
		lm.settle(t, [][]labtest.Answer{{a}}, mark, nil)
		return
	}
	lm.expectOne(t, a, 0, errAnyError, mark)
}

// Fault delivers an event with an error injected before or after one of
// its statements, then delivers it again: the first attempt is kept whole
// or not at all, its answer is one the provider retries (see judge), and
// the retry finishes the job.
func (lm *ledgerMachine) Fault(t *rapid.T) {
	e := lm.newOrKnown(t)
	f := labtest.Fault{When: drawWhen(t), N: rapid.IntRange(1, 7).Draw(t, "statement")}
	mark := lm.c.Transcript.Len()
	fault := lm.db.Inject(f)
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.db.Lift()
	if fault.Fired() == 0 {
		lm.story.add("deliver %s with a fault %s statement %d, which it never reaches: %v", scenarios.ShowEvent(e), f.When, f.N, a)
		lm.settle(t, [][]labtest.Answer{{a}}, mark, nil)
		return
	}
	lm.story.add("deliver %s with a fault %s statement %d: %v%s", scenarios.ShowEvent(e), f.When, f.N, a, indented(lm.c.Transcript.From(mark)))
	lm.settle(t, [][]labtest.Answer{{a}}, mark, nil)
	lm.deliver(t, "redeliver", e)
}

// Crash delivers an event and kills the process before or after one of its
// statements, then restarts the service (reopening the database) and
// delivers it again.
func (lm *ledgerMachine) Crash(t *rapid.T) {
	e := lm.newOrKnown(t)
	when, n := drawWhen(t), rapid.IntRange(1, 7).Draw(t, "statement")
	mark := lm.c.Transcript.Len()
	if die := lm.spec.hooks.dieAt; die != nil {
		die(n)
		defer die(0)
	}
	a := lm.db.Deliver(e, labtest.Delivery{Kill: when, KillAt: n})
	if !a.Killed {
		lm.story.add("deliver %s, to be killed %s statement %d, which it never reaches: %v", scenarios.ShowEvent(e), when, n, a)
		lm.settle(t, [][]labtest.Answer{{a}}, mark, nil)
		return
	}
	lm.story.add("deliver %s, the process killed %s statement %d, the service restarted%s", scenarios.ShowEvent(e), when, n, indented(lm.c.Transcript.From(mark)))
	lm.settle(t, [][]labtest.Answer{{{Session: "(killed)", Event: e, Err: errKilledStory}}}, mark, nil)
	lm.deliver(t, "redeliver", e)
}

// Race runs two or three sessions at once, each delivering one or two
// events (or running one of the exercise's jobs), under a schedule rapid
// draws, sometimes with an error injected into the first statement of a
// kind that any of them runs. The events are drawn around one new event:
// itself (so that it arrives in several sessions at once), its key with
// another payload, or any other. The answers and the database must be
// those of some order of the deliveries.
func (lm *ledgerMachine) Race(t *rapid.T) {
	base := lm.fresh(t)
	if rapid.Bool().Draw(t, "at the cap") {
		lm.atTheCap(t, &base)
	}
	n := rapid.IntRange(2, 3).Draw(t, "sessions")
	sessions := make([][]lab.Event, n)
	var told []string
	for i := range sessions {
		k := rapid.IntRange(1, 2).Draw(t, "deliveries in the session")
		for range k {
			sessions[i] = append(sessions[i], lm.raceItem(t, base))
		}
		var parts []string
		for _, e := range sessions[i] {
			parts = append(parts, lm.itemString(e))
		}
		told = append(told, strings.Join(parts, " then "))
	}
	var fault *labtest.Fault
	if rapid.Bool().Draw(t, "a fault in the race") {
		f := labtest.Fault{When: drawWhen(t), Op: rapid.SampledFrom(faultOps).Draw(t, "fault's statement")}
		fault = lm.db.Inject(f)
	}
	before := lm.state()
	mark := lm.c.Transcript.Len()
	answers, schedule := lm.db.Interleave(func(step int, parked []string, _ string) string {
		return rapid.SampledFrom(parked).Draw(t, fmt.Sprintf("step %d", step+1))
	}, sessions...)
	lm.db.Lift()
	what := fmt.Sprintf("at once: %s; schedule %s", strings.Join(told, " | "), schedule)
	if fault != nil && fault.Fired() > 0 {
		what += fmt.Sprintf("; a %s", fault)
	}
	lm.story.add("%s: %s%s", what, showAnswers(answers), indented(lm.c.Transcript.From(mark)))
	lm.settleRace(t, answers, before, mark)
}

// atTheCap makes e a credit that fits its account's balance once and not
// twice, if an account and an amount allow one.
func (lm *ledgerMachine) atTheCap(t *rapid.T, e *lab.Event) {
	type fit struct{ account, amount int64 }
	var fits []fit
	for _, id := range slices.Sorted(maps.Keys(lm.m.balances)) {
		b := lm.m.balances[id]
		for _, amount := range storyAmounts {
			if b+amount <= lab.MaxBalance && b+2*amount > lab.MaxBalance {
				fits = append(fits, fit{id, amount})
			}
		}
	}
	if len(fits) == 0 {
		return
	}
	f := rapid.SampledFrom(fits).Draw(t, "fits once")
	e.AccountID, e.Amount = f.account, f.amount
}

// FaultRace delivers one event (or its key with another payload) in two or
// three sessions at once, with an error injected before or after the first
// statement of a kind one of them runs (COMMIT half the time): the one that
// fails while another waits for it, or runs the same event, keeps all of
// it or nothing, and says so.
func (lm *ledgerMachine) FaultRace(t *rapid.T) {
	base := lm.newOrKnown(t)
	if rapid.Bool().Draw(t, "at the cap") {
		lm.atTheCap(t, &base)
	}
	n := rapid.IntRange(2, 3).Draw(t, "sessions")
	sessions := make([][]lab.Event, n)
	var told []string
	for i := range sessions {
		e := base
		if i > 0 && rapid.IntRange(0, 3).Draw(t, "same key, other payload") == 0 {
			e.Amount = rapid.SampledFrom(slices.DeleteFunc(slices.Clone(storyAmounts), func(x int64) bool { return x == base.Amount })).Draw(t, "other amount")
		}
		sessions[i] = []lab.Event{e}
		told = append(told, scenarios.ShowEvent(e))
	}
	op := labtest.OpCommit
	if !rapid.Bool().Draw(t, "at COMMIT") {
		op = rapid.SampledFrom(faultOps).Draw(t, "fault's statement")
	}
	f := labtest.Fault{When: drawWhen(t), Op: op}
	fault := lm.db.Inject(f)
	before := lm.state()
	mark := lm.c.Transcript.Len()
	answers, schedule := lm.db.Interleave(func(step int, parked []string, _ string) string {
		return rapid.SampledFrom(parked).Draw(t, fmt.Sprintf("step %d", step+1))
	}, sessions...)
	lm.db.Lift()
	what := fmt.Sprintf("at once: %s; schedule %s", strings.Join(told, " | "), schedule)
	if fault.Fired() > 0 {
		what += fmt.Sprintf("; a %s", fault)
	}
	lm.story.add("%s: %s%s", what, showAnswers(answers), indented(lm.c.Transcript.From(mark)))
	lm.settleRace(t, answers, before, mark)
}

// faultOps are the statements a fault in a race strikes first: COMMIT, the
// one whose failure leaves the most open, most often.
var faultOps = []labtest.Op{labtest.OpBegin, labtest.OpInsert, labtest.OpUpdate, labtest.OpSelect, labtest.OpDelete,
	labtest.OpCommit, labtest.OpCommit, labtest.OpCommit}

// raceItem draws one item of a race around base: a delivery, or a job of
// the exercise.
func (lm *ledgerMachine) raceItem(t *rapid.T, base lab.Event) lab.Event {
	kinds := []string{"same", "same", "same key", "new", "known", "changed", "twin", "missing"}
	for _, name := range lm.spec.jobs {
		kinds = append(kinds, "job "+name, "job "+name)
	}
	kind := rapid.SampledFrom(kinds).Draw(t, "race item")
	if name, ok := strings.CutPrefix(kind, "job "); ok {
		e := job(fmt.Sprintf("%s %d", name, len(lm.jobs)+1))
		lm.jobs[e.EventID] = "a " + name
		if lm.spec.hooks.raceJob != nil {
			lm.jobs[e.EventID] = lm.spec.hooks.raceJob(lm, t, name)
		}
		return e
	}
	switch kind {
	case "same":
		return base
	case "same key":
		other := base
		if rapid.Bool().Draw(t, "other account") {
			other.AccountID = 3 - other.AccountID
		} else {
			other.Amount = rapid.SampledFrom(slices.DeleteFunc(slices.Clone(storyAmounts), func(x int64) bool { return x == base.Amount })).Draw(t, "other amount")
		}
		return other
	case "known":
		if len(lm.redeliverable()) > 0 {
			return lm.known(t)
		}
	case "changed":
		if len(lm.redeliverable()) > 0 {
			return lm.changed(t)
		}
	case "twin":
		if len(lm.redeliverable()) > 0 {
			return lm.twin(t)
		}
	case "missing":
		e := lm.fresh(t)
		e.AccountID = missingAccount
		return e
	}
	return lm.fresh(t)
}

// itemString describes a race item.
func (lm *ledgerMachine) itemString(e lab.Event) string {
	if e.Source != jobSource {
		return scenarios.ShowEvent(e)
	}
	return lm.jobs[e.EventID]
}

// showAnswers lists answers by session.
func showAnswers(answers []labtest.Answer) string {
	var parts []string
	for _, a := range answers {
		parts = append(parts, fmt.Sprintf("%s %v", a.Session, a))
	}
	return strings.Join(parts, "; ")
}

// Reconnect closes the pool's idle connections, as database/sql does when
// they have idled too long: the next statement opens a new connection,
// which has only the settings the DSN gives every connection.
func (lm *ledgerMachine) Reconnect(t *rapid.T) {
	lm.env.mu.Lock()
	pool := lm.env.pool
	lm.env.mu.Unlock()
	pool.SetMaxIdleConns(0)
	pool.SetMaxIdleConns(2)
	lm.story.add("the pool closes its idle connections: the next statement opens a new one")
}

// Restart replaces the handler by a new one on the same pool, as a
// restarted service (or a second instance of it) would be.
func (lm *ledgerMachine) Restart(t *rapid.T) {
	lm.env.restart()
	lm.story.add("the service restarts: a new handler on the same database")
}

// drawWhen draws the side of a statement a fault strikes.
func drawWhen(t *rapid.T) labtest.When {
	return rapid.SampledFrom([]labtest.When{labtest.Before, labtest.After}).Draw(t, "when")
}

// fresh draws an event never stored before in this story.
func (lm *ledgerMachine) fresh(t *rapid.T) lab.Event {
	source := rapid.SampledFrom(storySources).Draw(t, "source")
	lm.next++
	n := lm.next
	var id string
	switch rapid.IntRange(0, 6).Draw(t, "id's shape") {
	case 0:
		id = fmt.Sprintf("evt-%d", n)
	case 1:
		id = "evt_" + rapid.StringOfN(rapid.RuneFrom([]rune("aAbBqQzZ09")), 3, 6, -1).Draw(t, "mixed case") + fmt.Sprint(n)
	case 2:
		id = fmt.Sprintf("évt-%d-事件🙂", n)
	case 3:
		id = exactly(lab.MaxKeyBytes, fmt.Sprintf("evt-%d-", n), rapid.SampledFrom([]string{"€", "é", "🙂", "x"}).Draw(t, "filling"))
	case 4:
		id = fmt.Sprintf("in/%d:x y", n)
	case 5:
		id = fmt.Sprint(n)
	case 6:
		id = fmt.Sprintf("in%d", n)
		for i, sep := range keySeparators {
			id += sep + string(rune('a'+i))
		}
	}
	for k := 1; lm.m.ever[lab.Key{Source: source, EventID: id}]; k++ {
		id = fmt.Sprintf("evt-%d~%d", n, k) // a twin took it
	}
	return lab.Event{Source: source, EventID: id, AccountID: lm.account(t), Amount: lm.amount(t)}
}

func (lm *ledgerMachine) account(t *rapid.T) int64 {
	return rapid.Int64Range(1, 2).Draw(t, "account")
}

func (lm *ledgerMachine) amount(t *rapid.T) int64 {
	return rapid.SampledFrom(storyAmounts).Draw(t, "amount")
}

// redeliverable are the stored keys a provider may send again: all of them,
// or on a clock those whose redelivery window is still open.
func (lm *ledgerMachine) redeliverable() []lab.Key {
	var keys []lab.Key
	for _, k := range sortedKeys(lm.m.stored) {
		if lm.spec.window == 0 || !lm.clockNow().After(lm.m.arrived[k].Add(lm.spec.window)) {
			keys = append(keys, k)
		}
	}
	return keys
}

// known draws an event the model holds; with none, rapid skips the step.
func (lm *ledgerMachine) known(t *rapid.T) lab.Event {
	keys := lm.redeliverable()
	if len(keys) == 0 {
		t.SkipNow() // no event to redeliver
	}
	return lm.m.stored[rapid.SampledFrom(keys).Draw(t, "known")]
}

// newOrKnown draws a new event or a known one.
func (lm *ledgerMachine) newOrKnown(t *rapid.T) lab.Event {
	if len(lm.redeliverable()) > 0 && rapid.Bool().Draw(t, "known") {
		return lm.known(t)
	}
	return lm.fresh(t)
}

// changed draws a known key with another account or amount.
func (lm *ledgerMachine) changed(t *rapid.T) lab.Event {
	e := lm.known(t)
	switch rapid.IntRange(0, 2).Draw(t, "change") {
	case 0:
		e.AccountID = 3 - e.AccountID
	case 1:
		e.AccountID = missingAccount
	default:
		e.Amount = rapid.SampledFrom(slices.DeleteFunc(slices.Clone(storyAmounts), func(x int64) bool { return x == e.Amount })).Draw(t, "other amount")
	}
	return e
}

// keySeparators are the separators a key written as one string may join
// source and id with, which ids hold (see fresh) and twins are split
// around: every byte but NUL is allowed in a source or an id (see
// lab.Event.Validate), control characters made to separate fields (the
// ASCII unit and record separators) included.
var keySeparators = []string{"/", ":", "|", ",", ";", "#", "\t", "\n", "\x01", "\x1e", "\x1f", "\x7f", "::"}

// twin draws an event whose key is a twin of a known one: the same id from
// another source, another case, a trailing space, or the characters of
// source and id split elsewhere around a separator ('/', ':', another of
// keySeparators or none), which a key written as one string cannot tell
// apart.
func (lm *ledgerMachine) twin(t *rapid.T) lab.Event {
	kind := rapid.SampledFrom([]string{"source", "case", "space", "split at /", "split at :", "split at a separator", "split"}).Draw(t, "twin's kind")
	if kind == "split at a separator" {
		e := lm.separated(t)
		kind = "split at " + rapid.SampledFrom(separatorsIn(e.Key())).Draw(t, "separator")
		return lm.twinOf(t, e, kind)
	}
	return lm.twinOf(t, lm.known(t), kind)
}

// twinsAtEach draws a known key that holds separators and, for each of
// them, a twin split around it: a key written as one string with any one
// of keySeparators between source and id takes one of them for the known
// event, which one twin at a time would find once in many stories.
func (lm *ledgerMachine) twinsAtEach(t *rapid.T) []lab.Key {
	e := lm.separated(t)
	var out []lab.Key
	for _, sep := range separatorsIn(e.Key()) {
		if twins := lm.twinsOf(e.Key(), "split at "+sep); len(twins) > 0 {
			out = append(out, rapid.SampledFrom(twins).Draw(t, "twin"))
		}
	}
	return out
}

// separated draws a known event whose key holds one of keySeparators
// (fresh's seventh shape holds each of them); with none, rapid skips the
// step.
func (lm *ledgerMachine) separated(t *rapid.T) lab.Event {
	var keys []lab.Key
	for _, k := range lm.redeliverable() {
		if len(separatorsIn(k)) > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		t.SkipNow() // no known key holds a separator
	}
	return lm.m.stored[rapid.SampledFrom(keys).Draw(t, "known")]
}

// twinOf draws a twin of e of a kind (see twinsOf); with none, rapid skips
// the step.
func (lm *ledgerMachine) twinOf(t *rapid.T, e lab.Event, kind string) lab.Event {
	twins := lm.twinsOf(e.Key(), kind)
	if len(twins) == 0 {
		t.SkipNow() // no twin of that kind
	}
	return lm.event(t, rapid.SampledFrom(twins).Draw(t, "twin"))
}

// event is the event the story delivers under key k: the stored one, or a
// new one with a payload drawn.
func (lm *ledgerMachine) event(t *rapid.T, k lab.Key) lab.Event {
	if old, ok := lm.m.stored[k]; ok {
		return old
	}
	return lab.Event{Source: k.Source, EventID: k.EventID, AccountID: lm.account(t), Amount: lm.amount(t)}
}

// separatorsIn lists the keySeparators that k's source or id holds.
func separatorsIn(k lab.Key) []string {
	var held []string
	for _, sep := range keySeparators {
		if strings.Contains(k.Source, sep) || strings.Contains(k.EventID, sep) {
			held = append(held, sep)
		}
	}
	return held
}

// twinsOf lists the twins of k of a kind (see twin, PatternTwin): "split
// at /" splits around a '/' (and so for any separator), "split" anywhere,
// with nothing between; "wildcard" writes the last character of k's id, or
// of its source, as a pattern (wildcardsOf).
func (lm *ledgerMachine) twinsOf(k lab.Key, kind string) []lab.Key {
	var out []lab.Key
	seen := map[lab.Key]bool{k: true}
	add := func(source, id string) {
		tk := lab.Key{Source: source, EventID: id}
		if !seen[tk] && (lab.Event{Source: source, EventID: id, AccountID: 1, Amount: 1}).Validate() == nil {
			seen[tk] = true
			out = append(out, tk)
		}
	}
	switch kind {
	case "source":
		for _, s := range storySources {
			add(s, k.EventID)
		}
	case "case":
		add(k.Source, flipCase(k.EventID))
		add(flipCase(k.Source), k.EventID)
	case "space":
		add(k.Source, k.EventID+" ")
	case "wildcard":
		for _, p := range wildcardsOf(k.EventID) {
			add(k.Source, p)
		}
		for _, p := range wildcardsOf(k.Source) {
			add(p, k.EventID)
		}
	default: // "split", or "split at " a separator
		if sep, ok := strings.CutPrefix(kind, "split at "); ok || kind == "split" {
			if !ok {
				sep = ""
			}
			for i := 1; i < len(k.EventID); i++ {
				if sep == "" || strings.HasPrefix(k.EventID[i:], sep) {
					add(k.Source+sep+k.EventID[:i], k.EventID[i+len(sep):])
				}
			}
			for i := 1; i < len(k.Source); i++ {
				if sep == "" || strings.HasPrefix(k.Source[i:], sep) {
					add(k.Source[:i], k.Source[i+len(sep):]+sep+k.EventID)
				}
			}
		}
	}
	return out
}

// wildcardsOf are patterns of s's characters that SQLite's GLOB or LIKE
// matches s with, each another key: its last character written as GLOB's
// ? or LIKE's _ (any one character), GLOB's * or LIKE's % (any run of
// them), GLOB's class [c] of it, or after a backslash (which a LIKE …
// ESCAPE '\' reads as the character itself). A lookup that matches a key
// by GLOB or LIKE may find s's row for the pattern's key: s was stored
// first, and sorts first when its last character is a digit (evt-1 before
// evt-? and evt-[1]).
func wildcardsOf(s string) []string {
	_, n := utf8.DecodeLastRuneInString(s)
	head, last := s[:len(s)-n], s[len(s)-n:]
	return []string{head + "?", head + "_", head + "*", head + "%", head + "[" + last + "]", head + `\` + last}
}

// flipCase swaps the case of every ASCII letter of s.
func flipCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

func sortedKeys[V any](m map[lab.Key]V) []lab.Key {
	return slices.SortedFunc(maps.Keys(m), func(a, b lab.Key) int { return strings.Compare(a.String()+"\x00"+a.Source, b.String()+"\x00"+b.Source) })
}

// ledgerModel is what an ideal handler would have stored.
type ledgerModel struct {
	stored   map[lab.Key]lab.Event
	balances map[int64]int64       // the accounts that exist
	receipt  map[lab.Key]int64     // replay: the balance right after each credit
	arrived  map[lab.Key]time.Time // retention: each event's first delivery
	ever     map[lab.Key]bool      // every key stored in the story, purged or not
}

// expect is the model's answer to e: the outcome, or the kind of error.
func (m *ledgerModel) expect(e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, lab.ErrInvalidEvent
	}
	if old, ok := m.stored[e.Key()]; ok {
		if old == e {
			return lab.Duplicate, nil
		}
		return 0, lab.ErrPayloadConflict
	}
	b, ok := m.balances[e.AccountID]
	switch {
	case !ok:
		return 0, lab.ErrUnknownAccount
	case b+e.Amount > lab.MaxBalance:
		return 0, lab.ErrInvalidEvent // the balance's CHECK refuses the credit
	}
	return lab.Applied, nil
}

// apply records e, delivered at at, as accepted.
func (m *ledgerModel) apply(e lab.Event, at time.Time) {
	m.stored[e.Key()] = e
	m.balances[e.AccountID] += e.Amount
	m.receipt[e.Key()] = m.balances[e.AccountID]
	m.arrived[e.Key()] = at
	m.ever[e.Key()] = true
}

func (m *ledgerModel) clone() *ledgerModel {
	return &ledgerModel{stored: maps.Clone(m.stored), balances: maps.Clone(m.balances), receipt: maps.Clone(m.receipt),
		arrived: maps.Clone(m.arrived), ever: maps.Clone(m.ever)}
}

// ledgerState is what the database holds.
type ledgerState struct {
	balances map[int64]int64
	inbox    []lab.Event
}

func (lm *ledgerMachine) state() ledgerState {
	b, inbox := lm.db.State()
	return ledgerState{b, inbox}
}

// ledgerDiff describes how the database differs from m, or returns "".
func ledgerDiff(got ledgerState, m *ledgerModel) string {
	var diffs []string
	for _, id := range slices.Sorted(maps.Keys(got.balances)) {
		want, ok := m.balances[id]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("account %d exists, and should not", id))
		case got.balances[id] != want:
			diffs = append(diffs, fmt.Sprintf("balance of account %d = %d, want %d", id, got.balances[id], want))
		}
	}
	seen := map[lab.Key]bool{}
	for _, e := range got.inbox {
		seen[e.Key()] = true
		if want, ok := m.stored[e.Key()]; !ok {
			diffs = append(diffs, fmt.Sprintf("the inbox holds %s, which the model does not", scenarios.ShowEvent(e)))
		} else if want != e {
			diffs = append(diffs, fmt.Sprintf("the inbox holds %s, want %s", scenarios.ShowEvent(e), scenarios.ShowEvent(want)))
		}
	}
	for _, k := range sortedKeys(m.stored) {
		if !seen[k] {
			diffs = append(diffs, fmt.Sprintf("the inbox lacks %s", scenarios.ShowEvent(m.stored[k])))
		}
	}
	if len(got.inbox) != len(m.stored) {
		diffs = append(diffs, fmt.Sprintf("inbox rows = %d, want %d", len(got.inbox), len(m.stored)))
	}
	return strings.Join(diffs, "; ")
}

// uncertain reports whether an answer leaves open whether its delivery took
// effect: an injected fault (after COMMIT, it did), a process killed, or
// busy after waiting out the busy timeout under contention. An injected
// fault is no fault of the event's: its answer must not be of one of
// finalKinds that the event's own model answer is not (see judge).
func uncertain(a labtest.Answer) bool {
	return errors.Is(a.Err, labtest.ErrInjected) || errors.Is(a.Err, errKilledStory) ||
		(errors.Is(a.Err, lab.ErrBusy) && a.Took >= busyTimeout)
}

// finalKinds are the kinds of error that say the event itself is wrong, so
// that the provider's retry cannot change the answer (HTTP 4xx).
var finalKinds = []error{lab.ErrInvalidEvent, lab.ErrPayloadConflict, lab.ErrUnknownAccount}

// finalKind returns the kind among finalKinds that err has, or nil.
func finalKind(err error) error {
	for _, kind := range finalKinds {
		if errors.Is(err, kind) {
			return kind
		}
	}
	return nil
}

// judge compares the i-th answer of its session with the model: it returns
// the effects the delivery may have had (applied or not) given its answer,
// or why the answer is wrong.
func (lm *ledgerMachine) judge(m *ledgerModel, a labtest.Answer, i int) (effects []bool, wrong string) {
	want, wantErr := m.expect(a.Event)
	switch {
	case uncertain(a):
		if kind := finalKind(a.Err); errors.Is(a.Err, labtest.ErrInjected) && kind != nil && !errors.Is(wantErr, kind) {
			return nil, fmt.Sprintf("%s: Process(%s) = %v, want an error the provider retries: the lab injected a fault, "+
				"no fault of the event's, and %s is an answer that retrying cannot change", a.Session, scenarios.ShowEvent(a.Event), a,
				labtest.KindName(kind))
		}
		if wantErr == nil && want == lab.Applied {
			return []bool{false, true}, ""
		}
		return []bool{false}, ""
	case wantErr != nil:
		if !errors.Is(a.Err, wantErr) {
			return nil, fmt.Sprintf("%s: Process(%s) = %v, want an error (%s)", a.Session, scenarios.ShowEvent(a.Event), a, labtest.KindName(wantErr))
		}
		return []bool{false}, ""
	case a.Err != nil || a.Outcome != want:
		return nil, fmt.Sprintf("%s: Process(%s) = %v, want %v", a.Session, scenarios.ShowEvent(a.Event), a, want)
	}
	if lm.spec.hooks.answerWrong != nil {
		if why := lm.spec.hooks.answerWrong(lm, m, a, i, want); why != "" {
			return nil, why
		}
	}
	return []bool{want == lab.Applied}, ""
}

// settle finds an order of the sessions' answers (each session's in its
// order), and for each delivery whose answer leaves it open whether it took
// effect, whether it did, under which every answer is the model's and the
// database is as the model says; it adopts that model, or fails the story.
// jobs, if not nil, settles what the step's jobs did.
func (lm *ledgerMachine) settle(t *rapid.T, sessions [][]labtest.Answer, mark int, jobs jobSettler) {
	got := lm.state()
	now := lm.clockNow()
	pos := make([]int, len(sessions))
	var why []string
	var found *ledgerModel
	var order []string
	var walk func(m *ledgerModel) bool
	walk = func(m *ledgerModel) bool {
		done := true
		for s := range sessions {
			if pos[s] == len(sessions[s]) {
				continue
			}
			done = false
			a := sessions[s][pos[s]]
			effects, wrong := lm.judge(m, a, pos[s])
			if wrong != "" {
				if len(why) < 3 {
					why = append(why, orderPrefix(append(order, a.Session))+wrong)
				}
				continue
			}
			for _, applied := range effects {
				next := m.clone()
				if applied {
					next.apply(a.Event, now)
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
		if jobs != nil {
			if wrong := jobs.wrong(m, got); len(wrong) > 0 {
				if len(why) < 3 {
					why = append(why, orderPrefix(order)+strings.Join(wrong, "; "))
				}
				return false
			}
			m = jobs.settle(m, got)
		}
		if d := ledgerDiff(got, m); d != "" {
			if len(why) < 3 {
				why = append(why, orderPrefix(order)+d)
			}
			return false
		}
		found = m
		return true
	}
	walk(lm.m.clone())
	if found == nil {
		what := "no order of the deliveries explains what they answered and what the database holds: "
		if len(sessions) == 0 || len(sessions) == 1 && len(sessions[0]) == 1 {
			what = ""
		}
		lm.fail(t, "%s%s%s", what, strings.Join(why, "; "), lm.excerpt(mark))
	}
	lm.m = found
}

// excerpt is the transcript of the step under way since mark, unless the
// story's last step tells it already.
func (lm *ledgerMachine) excerpt(mark int) string {
	if n := len(lm.story.steps); n > 0 && strings.Contains(lm.story.steps[n-1], "\n") {
		return ""
	}
	return indented(lm.c.Transcript.From(mark))
}

// orderPrefix names the order a reason was found in, when there is more
// than one delivery.
func orderPrefix(order []string) string {
	if len(order) < 2 {
		return ""
	}
	return "in the order " + strings.Join(order, ", ") + ": "
}

// expectOne settles one answer against an expectation of the step's own
// (a bug rewrote one of its statements): the answer must be want or an
// error of kind wantErr (errAnyError: any error), and the database the
// model's, with the event applied only if want is Applied.
func (lm *ledgerMachine) expectOne(t *rapid.T, a labtest.Answer, want lab.Outcome, wantErr error, mark int) {
	switch {
	case wantErr == errAnyError && a.Err == nil:
		lm.fail(t, "%s: Process(%s) = %v, want an error: nothing may be answered success for a credit that went nowhere%s",
			a.Session, scenarios.ShowEvent(a.Event), a, lm.excerpt(mark))
	case wantErr != nil && wantErr != errAnyError && !errors.Is(a.Err, wantErr):
		lm.fail(t, "%s: Process(%s) = %v, want an error (%s)%s", a.Session, scenarios.ShowEvent(a.Event), a, labtest.KindName(wantErr),
			lm.excerpt(mark))
	case wantErr == nil && (a.Err != nil || a.Outcome != want):
		lm.fail(t, "%s: Process(%s) = %v, want %v%s", a.Session, scenarios.ShowEvent(a.Event), a, want, lm.excerpt(mark))
	}
	m := lm.m.clone()
	if wantErr == nil && want == lab.Applied {
		m.apply(a.Event, lm.clockNow())
	}
	if d := ledgerDiff(lm.state(), m); d != "" {
		lm.fail(t, "after %s: Process(%s) = %v, the database differs from the model: %s%s", a.Session, scenarios.ShowEvent(a.Event), a, d,
			lm.excerpt(mark))
	}
	lm.m = m
}

// settleRace settles a race's answers: the deliveries' by settle, the jobs'
// by what each job promises.
func (lm *ledgerMachine) settleRace(t *rapid.T, answers []labtest.Answer, before ledgerState, mark int) {
	var sessions [][]labtest.Answer
	var jobs []labtest.Answer
	index := map[string]int{}
	for _, a := range answers {
		if isJob(a) {
			jobs = append(jobs, a)
			continue
		}
		i, ok := index[a.Session]
		if !ok {
			i = len(sessions)
			index[a.Session] = i
			sessions = append(sessions, nil)
		}
		sessions[i] = append(sessions[i], a)
	}
	var settler jobSettler
	if len(jobs) > 0 && lm.spec.hooks.settleJobs != nil {
		settler = lm.spec.hooks.settleJobs(lm, jobs)
	}
	lm.settle(t, sessions, mark, settler)
	if settler != nil {
		if why := settler.after(lm, before); why != "" {
			lm.fail(t, "%s%s", why, lm.excerpt(mark))
		}
	}
}

// clockNow is the story's clock, or the zero time without one.
func (lm *ledgerMachine) clockNow() time.Time {
	if lm.spec.window == 0 {
		return time.Time{}
	}
	return lm.env.clock()
}

// repairSearch is the ledger property of an exercise that repairs a
// handler, run on the handler as it is: the exercise names it for the
// command that replays a story, weights say which steps its stories draw
// most.
func repairSearch(exercise, name, shows string, stories int, weights map[string]int) Check[lab.Variant] {
	return ledgerSearch(ledgerSpec{propertySpec: propertySpec{exercise: exercise, name: name, shows: shows, stories: stories},
		weights: weights})
}

// ledgerSearch is the ledger property spec, run on the handler as it is.
func ledgerSearch(spec ledgerSpec) Check[lab.Variant] {
	return func(c *Checker, v lab.Variant) {
		spec := spec
		spec.env = &ledgerEnv{newInner: v.New}
		c.Search(spec.property(), spec.env.variant(v))
	}
}
