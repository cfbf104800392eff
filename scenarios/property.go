package scenarios

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"pgregory.net/rapid"

	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
)

// Property lets rapid invent the stories. A random sequence of actions —
// new events, repeats, repeats with another amount or account, the same id
// from the other source, twins (a known key in another case, with
// whitespace around it, or with an accent in the other Unicode normal
// form), events for a missing account, deliveries with a fault at a random
// statement, a row the schema refuses, deliveries while another connection
// holds the write lock, and two deliveries at once under a random
// interleaving —
// runs against the variant and against a plain model of the ledger (which
// events were accepted, what each balance is). After every action the
// answers must be the model's and the database must equal the model. When
// they differ rapid shrinks the sequence to the smallest story that still
// breaks, and that story, numbered, is the evidence.
//
// The draws reach the edges of every field, where a handler that
// normalises a key or compares a payload through a lossy encoding goes
// wrong: event ids plain, accented (composed or decomposed) and exactly
// MaxKeyBytes long in multi-byte runes; amounts from 1 to the cap and
// past it (2^24±1, the cap ±1, 2^31±1, 2^53±1, 2^32 more than a known
// amount); accounts with large ids beside the ids a lossy encoding takes
// for them (1 and 2^32+1, 2^53 and 2^53+1). Two keys that differ in a
// single byte are two events in the model, and two payloads that differ in
// a single unit are a conflict.
//
// The default run uses a fixed seed, so the matrix is the same every time;
// -rapid.seed and -rapid.checks choose others (see scenarios_test.go).
func Property(r *labtest.Run) {
	rec := &recorder{name: r.TestName()}
	// One database for all the stories, reset before each: rapid runs
	// thousands of them while it shrinks.
	c := r.Child()
	db := c.OpenScheduled(propertyAccounts...)
	cases := 0
	func() {
		defer func() {
			if p := recover(); p != nil && p != errRecorderStop {
				panic(p)
			}
		}()
		rapid.Check(rec, func(t *rapid.T) {
			cases++
			c.Restart()
			db.Reset()
			t.Repeat(rapid.StateMachineActions(newLedgerMachine(c, db)))
		})
	}()
	// The last story rapid ran is the shrunk counterexample if it found one,
	// so the invariants of its database matter only when it found none.
	c.Close()
	if !rec.failed {
		for _, f := range c.Failures() {
			r.Errorf("after the last story: %s", f)
		}
		r.Notef("rapid found no counterexample in %d random stories (-rapid.seed=%s)", cases, rapidSeed())
		return
	}
	r.Transcript.Note("", rec.evidence(), "")
	r.Errorf("%s", rec.summary)
}

// rapidSeed is the seed rapid was given, which replays the same stories.
func rapidSeed() string {
	if f := flag.Lookup("rapid.seed"); f != nil {
		return f.Value.String()
	}
	return "?"
}

// errRecorderStop ends rapid.Check when it calls FailNow on the recorder.
var errRecorderStop = errors.New("rapid gave up")

// recorder is the rapid.TB that Property hands to rapid.Check: it keeps
// rapid's report instead of failing the test, so that a naive variant being
// caught is a verdict in the matrix, not a red build. rapid's report — the
// seed that reproduces it and the shrunk story — becomes the cell's evidence.
type recorder struct {
	name      string
	log       strings.Builder // what rapid logged after its report: the draws and the failure
	failed    bool
	summary   string // the cell's one line: how many stories held, and what broke
	reproduce string // the command that replays the failure
}

func (r *recorder) Helper()         {}
func (r *recorder) Name() string    { return r.name }
func (r *recorder) Failed() bool    { return r.failed }
func (r *recorder) Fail()           { r.failed = true }
func (r *recorder) FailNow()        { r.failed = true; panic(errRecorderStop) }
func (r *recorder) SkipNow()        { panic(errRecorderStop) }
func (r *recorder) Log(args ...any) { r.Logf("%s", fmt.Sprint(args...)) }
func (r *recorder) Logf(format string, args ...any) {
	fmt.Fprintf(&r.log, format+"\n", args...)
}
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !r.failed {
		r.summary, r.reproduce = r.readReport(msg)
		r.failed = true
		return
	}
	r.Logf("%s", msg)
}

// rapidReport matches the head of rapid's report of a failure: how many
// test cases passed first, the failure's first line, and the flags that
// replay it.
var rapidReport = regexp.MustCompile(`(?s)^\[rapid\] (failed|panic) after (\d+) tests: ([^\n]*).*?To reproduce, specify -run="[^"]*" ([^\n]*)`)

// readReport turns rapid's report into the cell's summary and a command
// that replays the failure in strict mode, which rapid's own line, lacking
// -lab.strict, would show as ok. The story and the draws follow in rapid's
// log; they are not repeated here.
func (r *recorder) readReport(msg string) (summary, reproduce string) {
	m := rapidReport.FindStringSubmatch(msg)
	if m == nil {
		return "[rapid] " + firstLine(strings.TrimPrefix(msg, "[rapid] ")), ""
	}
	held := "the first random story breaks it"
	if m[2] != "0" {
		held = fmt.Sprintf("%s random stories held, then one broke it", m[2])
	}
	if m[1] == "panic" {
		held += " with a panic"
	}
	var pattern []string
	for _, elem := range strings.Split(r.name, "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(elem)+"$")
	}
	env := "" // a server's cell replays only with the server named
	if strings.HasPrefix(r.name, "TestPostgres/") {
		env = report.EnvPostgres + "=… "
	} else if strings.HasPrefix(r.name, "TestMariaDB/") {
		env = report.EnvMariaDB + "=… "
	}
	// On two lines, the pattern last, so that the command fits a transcript
	// and still pastes whole into a shell.
	reproduce = fmt.Sprintf("%sgo test ./scenarios -lab.strict %s \\\n    -run '%s'", env, m[4], strings.Join(pattern, "/"))
	if !Shrinking() {
		return fmt.Sprintf("%s (not shrunk: the replay line shrinks it); %s", held, m[3]), reproduce
	}
	return fmt.Sprintf("%s; shrunk: %s", held, m[3]), reproduce
}

// Shrinking reports whether rapid will shrink a counterexample, which is
// what -rapid.shrinktime decides: zero ends shrinking before its first
// attempt. Shrinking replays stories thousands of times, ten times the cost
// of finding the counterexample (Property over every variant: 22 s with it,
// 2 s without), and buys only a shorter story: the verdict is the same. So
// the matrix test shrinks when someone will read the story (-lab.strict,
// -lab.report: explain, -evidence, the page) and go test ./... does not.
func Shrinking() bool {
	f := flag.Lookup("rapid.shrinktime")
	if f == nil {
		return true
	}
	d, err := time.ParseDuration(f.Value.String())
	return err != nil || d > 0
}

// evidence is what the cell's transcript shows of rapid's report: the
// shrunk story once, with the draws that make it, and how to replay it.
func (r *recorder) evidence() string {
	return fmt.Sprintf("rapid: %s\nreplay it:\n  %s\n%s", r.summary, r.reproduce, strings.TrimRight(r.log.String(), "\n"))
}
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); r.FailNow() }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }
func (r *recorder) Skip(args ...any)                  { r.SkipNow() }
func (r *recorder) Skipf(format string, args ...any)  { r.SkipNow() }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// ledger is the model: what the correct handler would have stored.
type ledger struct {
	stored   map[lab.Key]lab.Event
	balances map[int64]int64
	next     int // for fresh event ids
}

// Accounts 1 and 2 exist, and three with large ids, each beside an id that
// a lossy encoding takes for it: 1 and 2^32+1 have the same low 32 bits (an
// int32), 2^53 and 2^53+1 the same float64. Account 99 never exists.
var propertyAccounts = []labtest.Account{{ID: 1}, {ID: 2}, {ID: 1<<32 + 1}, {ID: 1 << 53}, {ID: 1<<53 + 1}}

// accountIDs are the ids of propertyAccounts.
var accountIDs = func() []int64 {
	var ids []int64
	for _, a := range propertyAccounts {
		ids = append(ids, a.ID)
	}
	return ids
}()

// lookalike is, for each account, the one a lossy comparison of account
// ids is likeliest to take it for.
var lookalike = map[int64]int64{1: 1<<32 + 1, 1<<32 + 1: 1, 2: 1, 1 << 53: 1<<53 + 1, 1<<53 + 1: 1 << 53}

// validAmounts are the amounts at the edges that a fresh event may carry:
// the smallest, the float32 neighbours 2^24 and 2^24+1, and the cap and
// the amount below it (999999999 and 1000000000 are one float32).
var validAmounts = []int64{1, 2, 1 << 24, 1<<24 + 1, lab.MaxAmount - 1, lab.MaxAmount}

// edgeAmounts are validAmounts and the amounts past the cap that a
// changed payload may carry: each makes the event invalid, never a
// duplicate of the amount it wraps to in an int32 or rounds to in a float.
var edgeAmounts = append(slices.Clone(validAmounts), lab.MaxAmount+1, 1<<31-1, 1<<31, 1<<31+1, 1<<53-1, 1<<53, 1<<53+1)

// expect is the model's answer to e: the outcome, or the kind of error.
func (m *ledger) expect(e lab.Event) (lab.Outcome, error) {
	if e.Validate() != nil {
		return 0, lab.ErrInvalidEvent
	}
	if _, ok := m.balances[e.AccountID]; !ok {
		return 0, lab.ErrUnknownAccount
	}
	if old, ok := m.stored[e.Key()]; ok {
		if old == e {
			return lab.Duplicate, nil
		}
		return 0, lab.ErrPayloadConflict
	}
	return lab.Applied, nil
}

// apply records e as accepted, if the model accepts it.
func (m *ledger) apply(e lab.Event) {
	if o, _ := m.expect(e); o == lab.Applied {
		m.stored[e.Key()] = e
		m.balances[e.AccountID] += e.Amount
	}
}

func (m *ledger) clone() *ledger {
	return &ledger{stored: maps.Clone(m.stored), balances: maps.Clone(m.balances), next: m.next}
}

// story is the numbered script of one test case, for the evidence.
type story struct {
	steps []string
}

func (s *story) add(format string, args ...any) {
	s.steps = append(s.steps, fmt.Sprintf("%d. ", len(s.steps)+1)+fmt.Sprintf(format, args...))
}

func (s *story) String() string { return strings.Join(s.steps, "\n") }

// ledgerMachine is one test case, written as a rapid state machine: each
// exported method with a *rapid.T is an action rapid may draw, and Check
// runs after every action, comparing the database with the model.
type ledgerMachine struct {
	c     *labtest.Run
	db    *labtest.DB
	m     *ledger
	story *story
}

func newLedgerMachine(c *labtest.Run, db *labtest.DB) *ledgerMachine {
	return &ledgerMachine{
		c:     c,
		db:    db,
		m:     &ledger{stored: map[lab.Key]lab.Event{}, balances: zeroBalances()},
		story: &story{},
	}
}

// zeroBalances is every account of the model at balance 0.
func zeroBalances() map[int64]int64 {
	balances := map[int64]int64{}
	for _, id := range accountIDs {
		balances[id] = 0
	}
	return balances
}

// Check is rapid's invariant: after every action the database equals the
// model.
func (lm *ledgerMachine) Check(t *rapid.T) {
	if diff := compare(lm.db, lm.m); diff != "" {
		lm.fail(t, "the database differs from the model: %s", diff)
	}
}

// New delivers an event never seen before.
func (lm *ledgerMachine) New(t *rapid.T) { lm.deliver(t, "deliver", lm.fresh(t)) }

// Repeat delivers a known event again, unchanged.
func (lm *ledgerMachine) Repeat(t *rapid.T) { lm.deliver(t, "redeliver", lm.known(t)) }

// ChangedPayload delivers a known key with another account or amount: often
// the one a lossy comparison takes for the stored one.
func (lm *ledgerMachine) ChangedPayload(t *rapid.T) {
	e := lm.known(t)
	if rapid.Bool().Draw(t, "change account") {
		e.AccountID = otherAccount(t, e.AccountID)
	} else {
		e.Amount = otherAmount(t, e.Amount)
	}
	lm.deliver(t, "redeliver with another payload", e)
}

// otherAccount draws an existing account other than id: its lookalike, or
// any other.
func otherAccount(t *rapid.T, id int64) int64 {
	others := slices.DeleteFunc(slices.Clone(accountIDs), func(x int64) bool { return x == id })
	return rapid.OneOf(rapid.Just(lookalike[id]), rapid.SampledFrom(others)).Draw(t, "account")
}

// otherAmount draws an amount other than a: one unit either side, a few
// more, 2^32 more (the same int32, and over the cap), or one at the edges.
func otherAmount(t *rapid.T, a int64) int64 {
	b := rapid.OneOf(
		rapid.Just(a+1), rapid.Just(a-1), rapid.Int64Range(a+2, a+10), rapid.Just(a+1<<32), rapid.SampledFrom(edgeAmounts),
	).Draw(t, "amount")
	if b == a {
		b = a + 1
	}
	return b
}

// freshAmount draws the amount of a new event: small, or at an edge.
func freshAmount(t *rapid.T) int64 {
	return rapid.OneOf(rapid.Int64Range(1, 10), rapid.SampledFrom(validAmounts)).Draw(t, "amount")
}

// OtherSource delivers a known event id from the other provider: another
// event, with a payload of its own.
func (lm *ledgerMachine) OtherSource(t *rapid.T) {
	e := lm.known(t)
	if e.Source == "provider-b" {
		e.Source = "provider-a"
	} else {
		e.Source = "provider-b"
	}
	if rapid.Bool().Draw(t, "other payload") {
		e.AccountID = otherAccount(t, e.AccountID)
		e.Amount = freshAmount(t)
	}
	lm.deliver(t, "deliver the same id from the other source", e)
}

// Twin delivers an event whose key differs from a known one only where a
// handler that normalises keys would make them one: the case of its
// letters (ASCII or not), a space, tab or no-break space before or after
// it, or an accented letter in the other Unicode normal form (U+00E9
// against e followed by U+0301) — in its event id or its source, with the
// known event's payload or another. Keys are compared byte for byte: it is
// another event, and applies.
func (lm *ledgerMachine) Twin(t *rapid.T) {
	e := lm.known(t)
	field := rapid.SampledFrom([]string{"event_id", "source"}).Draw(t, "field")
	value := &e.EventID
	if field == "source" {
		value = &e.Source
	}
	was := *value
	twins := twinsOf(was)
	if len(twins) == 0 {
		t.Skip("no twin of the key fits MaxKeyBytes")
	}
	how := rapid.SampledFrom(slices.Sorted(maps.Keys(twins))).Draw(t, "twin")
	*value = twins[how]
	if how == "with whitespace" {
		space := rapid.SampledFrom([]string{" ", "\t", "\u00a0"}).Draw(t, "space")
		*value = space + was
		if rapid.Bool().Draw(t, "after") {
			*value = was + space
		}
	}
	if rapid.Bool().Draw(t, "other payload") {
		e.AccountID = otherAccount(t, e.AccountID)
		e.Amount = freshAmount(t)
	}
	lm.deliver(t, fmt.Sprintf("deliver the %s %s %s,", field, ShowKey(was), how), e)
}

// twinsOf returns the twins of s that stay within MaxKeyBytes and differ
// from it, by how they differ: "in another case", "in the other normal
// form", and "with whitespace", whose space Twin draws (a placeholder
// here).
func twinsOf(s string) map[string]string {
	twins := map[string]string{}
	if c := otherCase(s); c != s && len(c) <= lab.MaxKeyBytes {
		twins["in another case"] = c
	}
	if f := otherForm(s); f != s && len(f) <= lab.MaxKeyBytes {
		twins["in the other normal form"] = f
	}
	if len(s)+len("\u00a0") <= lab.MaxKeyBytes {
		twins["with whitespace"] = s + " "
	}
	return twins
}

// otherCase is s in upper case, or in lower case if it has no lower-case
// letter. The letters the draws use (ASCII, é and É) keep their length.
func otherCase(s string) string {
	if u := strings.ToUpper(s); u != s {
		return u
	}
	return strings.ToLower(s)
}

// composed and decomposed are é in Unicode's two normal forms: NFC's one
// code point, and NFD's e with a combining acute accent.
const composed, decomposed = "\u00e9", "e\u0301"

// otherForm is s with its accented letters in the other normal form: a
// decomposed é composed, or else the first composed one decomposed.
func otherForm(s string) string {
	if strings.Contains(s, decomposed) {
		return strings.ReplaceAll(s, decomposed, composed)
	}
	return strings.Replace(s, composed, decomposed, 1)
}

// MissingAccount delivers an event for an account that does not exist.
func (lm *ledgerMachine) MissingAccount(t *rapid.T) {
	e := lm.fresh(t)
	e.AccountID = 99
	lm.deliver(t, "deliver to a missing account", e)
}

// Fault delivers an event with an injected error before or after one of
// its statements, then delivers it again: the first attempt is kept whole
// or not at all, and the retry finishes the job.
func (lm *ledgerMachine) Fault(t *rapid.T) {
	e := lm.newOrKnown(t)
	f := labtest.Fault{
		When: rapid.SampledFrom([]labtest.When{labtest.Before, labtest.After}).Draw(t, "when"),
		N:    rapid.IntRange(1, 6).Draw(t, "statement"),
	}
	want, wantErr := lm.m.expect(e)
	mark := lm.c.Transcript.Len()
	fault := lm.db.Inject(f)
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.db.Lift()
	lm.story.add("deliver %s with a fault %s statement %d: %v\n%s", ShowEvent(e), f.When, f.N, a, indentText(lm.c.Transcript.From(mark)))
	if fault.Fired() == 0 {
		lm.check(t, a, want, wantErr)
		lm.m.apply(e)
		return
	}
	applied := lm.m.clone()
	applied.apply(e)
	kept := compare(lm.db, applied) == "" && want == lab.Applied
	if !kept && compare(lm.db, lm.m) != "" {
		lm.fail(t, "after a fault %s statement %d, the database is neither as before nor with %s applied: %s",
			f.When, f.N, ShowEvent(e), compare(lm.db, lm.m))
	}
	if a.Err == nil && !kept {
		lm.check(t, a, 0, labtest.ErrInjected) // it answered success for work it did not keep
	}
	lm.m.apply(e)
	if kept {
		want, wantErr = lab.Duplicate, nil
	}
	a = lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.story.add("redeliver %s: %v", ShowEvent(e), a)
	lm.check(t, a, want, wantErr)
}

// Refused delivers an event whose INSERT a bug between validation and the
// database hands amount 0 (see DatabaseRefusal): the schema refuses the
// row, and that must come back as an invalid event. A handler whose INSERT
// the rewrite cannot reach (it binds the amount as another type, or writes
// the row otherwise) got the event as it was: that is a plain delivery,
// held to the model as one.
func (lm *ledgerMachine) Refused(t *rapid.T) {
	e := lm.fresh(t)
	if e.Amount == e.AccountID {
		// The rewrite finds the amount by its value: here it could hit the
		// account instead, whatever type the handler binds the amount as.
		e.Amount++
	}
	fault := lm.db.Inject(labtest.Fault{When: labtest.Before, Op: labtest.OpInsert, Table: "inbox", Rewrite: zeroAmount(e.Amount)})
	want, wantErr := lm.m.expect(e)
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.db.Lift()
	if fault.Fired() == 0 {
		lm.story.add("deliver %s (its INSERT's amount could not be rewritten to 0: a plain delivery): %v", ShowEvent(e), a)
		lm.check(t, a, want, wantErr)
		lm.m.apply(e)
		return
	}
	lm.story.add("deliver %s with its INSERT's amount rewritten to 0: %v", ShowEvent(e), a)
	lm.check(t, a, 0, lab.ErrInvalidEvent)
}

// Locked delivers an event while another connection holds the write lock,
// with a caller that gives up after 50 ms (LockTimeout waits out the whole
// busy timeout; here that would only cost time).
func (lm *ledgerMachine) Locked(t *rapid.T) {
	e := lm.newOrKnown(t)
	if _, server := lm.c.Server(); server {
		lm.lockedServer(t, e)
		return
	}
	release := lm.db.HoldWriteLock()
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true, Within: 50 * time.Millisecond})
	release()
	lm.story.add("deliver %s while another connection holds the write lock, giving up after 50 ms: %v", ShowEvent(e), a)
	lm.checkLocked(t, e, a)
}

// lockedServer is Locked on a server, where a lock wait is real time and a
// cancelled context closes the connection: another connection holds both
// tables the way SQLite's write lock holds the file (on PostgreSQL in
// EXCLUSIVE mode, on MariaDB by locking reads of every row and gap at
// REPEATABLE READ), and the lab ends the delivery's statement on the
// server as soon as it is seen waiting (labtest.Delivery.WhileLocked).
func (lm *ledgerMachine) lockedServer(t *rapid.T, e lab.Event) {
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true, WhileLocked: true})
	lm.story.add("deliver %s while another connection holds both tables, its waiting statement ended: %v", ShowEvent(e), a)
	lm.checkLocked(t, e, a)
}

// checkLocked checks the answer to a delivery made while the tables were
// locked.
func (lm *ledgerMachine) checkLocked(t *rapid.T, e lab.Event, a labtest.Answer) {
	// Busy: the handler cannot know. Only a repeat it can read without
	// writing may be answered from what is committed.
	if want, _ := lm.m.expect(e); !(want == lab.Duplicate && a.Err == nil && a.Outcome == lab.Duplicate) {
		lm.check(t, a, 0, lab.ErrBusy)
	}
}

// Race delivers two events at once under an interleaving rapid draws: the
// same event twice, one key with two amounts, or two different events. The
// answers and the database must be those of one order or the other.
func (lm *ledgerMachine) Race(t *rapid.T) {
	x := lm.newOrKnown(t)
	y := x
	switch rapid.IntRange(0, 2).Draw(t, "pair") {
	case 1:
		y.Amount++ // the same key with another amount
	case 2:
		y = lm.fresh(t)
	}
	mark := lm.c.Transcript.Len()
	answers, schedule := lm.db.Interleave(func(step int, parked []string, _ string) string {
		return rapid.SampledFrom(parked).Draw(t, fmt.Sprintf("step %d", step+1))
	}, []lab.Event{x}, []lab.Event{y})
	lm.story.add("deliver %s and %s at once, schedule %s: %v\n%s", ShowEvent(x), ShowEvent(y), schedule, answers, indentText(lm.c.Transcript.From(mark)))
	var why []string
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		model := lm.m.clone()
		var wrong []string
		for _, i := range order {
			a := answers[i]
			want, wantErr := model.expect(a.Event)
			if wantErr != nil && !errors.Is(a.Err, wantErr) {
				wrong = append(wrong, fmt.Sprintf("%s answered %v, want an error (%s)", a.Session, a, labtest.KindName(wantErr)))
			} else if wantErr == nil && (a.Err != nil || a.Outcome != want) {
				wrong = append(wrong, fmt.Sprintf("%s answered %v, want %v", a.Session, a, want))
			}
			model.apply(a.Event)
		}
		if d := compare(lm.db, model); d != "" {
			wrong = append(wrong, d)
		}
		if len(wrong) == 0 {
			lm.m.stored, lm.m.balances = model.stored, model.balances
			return
		}
		why = append(why, fmt.Sprintf("%s then %s: %s", answers[order[0]].Session, answers[order[1]].Session, strings.Join(wrong, ", ")))
	}
	lm.fail(t, "two deliveries at once, schedule %s = %v: neither order explains it (%s)", schedule, answers, strings.Join(why, "; "))
}

// deliver delivers e and checks the answer against the model's. It
// delivers Unchecked: Check, comparing the database with the
// model after every action, already checks that a failed attempt or a
// duplicate changed nothing.
func (lm *ledgerMachine) deliver(t *rapid.T, what string, e lab.Event) {
	want, wantErr := lm.m.expect(e)
	a := lm.db.Deliver(e, labtest.Delivery{Unchecked: true})
	lm.story.add("%s %s: %v", what, ShowEvent(e), a)
	lm.check(t, a, want, wantErr)
	lm.m.apply(e)
}

// check compares an answer with the model's.
func (lm *ledgerMachine) check(t *rapid.T, a labtest.Answer, want lab.Outcome, wantErr error) {
	switch {
	case wantErr != nil && !errors.Is(a.Err, wantErr):
		lm.fail(t, "Process(%s) = %v, want an error (%s)", ShowEvent(a.Event), a, labtest.KindName(wantErr))
	case wantErr == nil && (a.Err != nil || a.Outcome != want):
		lm.fail(t, "Process(%s) = %v, want %v", ShowEvent(a.Event), a, want)
	}
}

// fail ends the test case with the story so far.
func (lm *ledgerMachine) fail(t *rapid.T, format string, args ...any) {
	t.Fatalf("%s\n\nthe story:\n%s", fmt.Sprintf(format, args...), lm.story)
}

// fresh draws an event never delivered before.
func (lm *ledgerMachine) fresh(t *rapid.T) lab.Event {
	lm.m.next++
	return lab.Event{
		Source:    rapid.SampledFrom([]string{"provider-a", "provider-b"}).Draw(t, "source"),
		EventID:   freshID(t, lm.m.next),
		AccountID: rapid.SampledFrom(accountIDs).Draw(t, "account"),
		Amount:    freshAmount(t),
	}
}

// freshID draws the id of the n-th new event: plain ("evt-7"), with an
// accented letter composed or decomposed ("évt-7"), or exactly MaxKeyBytes
// long, "evt-7-" and then one multi-byte rune repeated (é, é decomposed,
// €, 𝄞) and x's to make up the bytes a rune does not fill.
func freshID(t *rapid.T, n int) string {
	id := fmt.Sprintf("evt-%d", n)
	switch rapid.SampledFrom([]string{"plain", "composed", "decomposed", "long"}).Draw(t, "id") {
	case "composed":
		return composed + id[1:]
	case "decomposed":
		return decomposed + id[1:]
	case "long":
		fill := rapid.SampledFrom([]string{composed, decomposed, "\u20ac", "\U0001d11e"}).Draw(t, "fill")
		return fillKey(id+"-", fill, lab.MaxKeyBytes)
	}
	return id
}

// known draws an event the model has accepted; with none yet, rapid skips
// the action.
func (lm *ledgerMachine) known(t *rapid.T) lab.Event {
	if len(lm.m.stored) == 0 {
		t.Skip("no event delivered yet")
	}
	keys := slices.SortedFunc(maps.Keys(lm.m.stored), func(a, b lab.Key) int { return strings.Compare(a.String(), b.String()) })
	return lm.m.stored[rapid.SampledFrom(keys).Draw(t, "key")]
}

// newOrKnown draws a new event or a known one, for the actions that try
// both.
func (lm *ledgerMachine) newOrKnown(t *rapid.T) lab.Event {
	if len(lm.m.stored) > 0 && rapid.Bool().Draw(t, "known") {
		return lm.known(t)
	}
	return lm.fresh(t)
}

// compare describes how the database differs from the model, or returns "".
func compare(db *labtest.DB, m *ledger) string {
	var diffs []string
	got, inbox := db.State()
	for _, id := range accountIDs {
		if got[id] != m.balances[id] {
			diffs = append(diffs, fmt.Sprintf("balance of account %d = %d, want %d", id, got[id], m.balances[id]))
		}
	}
	for _, e := range inbox {
		if m.stored[e.Key()] != e {
			diffs = append(diffs, fmt.Sprintf("inbox holds %s, the model does not", ShowEvent(e)))
		}
	}
	if len(inbox) != len(m.stored) {
		diffs = append(diffs, fmt.Sprintf("inbox rows = %d, want %d", len(inbox), len(m.stored)))
	}
	return strings.Join(diffs, "; ")
}

func indentText(s string) string {
	return "   " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n   ")
}

// ShowEvent renders e as Event.String does, with its source and event id as
// ShowKey renders them: the stories of Property and of the exercises' checks.
func ShowEvent(e lab.Event) string {
	return fmt.Sprintf("%s/%s account=%d amount=%d", ShowKey(e.Source), ShowKey(e.EventID), e.AccountID, e.Amount)
}

// ShowKey renders a key so that two keys that look alike read apart: as
// it is when it is printable ASCII without spaces, else quoted with every
// other rune escaped ("\u00e9vt-7", "e\u0301vt-7", " evt-7"), and a rune
// (with its combining marks) repeated more than three times written once
// with its count: "evt-7-" + 61×"\u00e9" + "x".
func ShowKey(s string) string {
	plain := s != ""
	for _, r := range s {
		if r <= ' ' || r > '~' {
			plain = false
		}
	}
	if plain {
		return s
	}
	// Split s into units: a rune and the combining marks after it.
	var units []string
	for _, r := range s {
		if len(units) > 0 && unicode.Is(unicode.Mn, r) {
			units[len(units)-1] += string(r)
			continue
		}
		units = append(units, string(r))
	}
	var parts []string
	run := ""
	flush := func() {
		if run != "" {
			parts = append(parts, strconv.QuoteToASCII(run))
			run = ""
		}
	}
	for i := 0; i < len(units); {
		j := i
		for j < len(units) && units[j] == units[i] {
			j++
		}
		if j-i > 3 {
			flush()
			parts = append(parts, fmt.Sprintf("%d×%s", j-i, strconv.QuoteToASCII(units[i])))
		} else {
			run += strings.Join(units[i:j], "")
		}
		i = j
	}
	flush()
	return strings.Join(parts, " + ")
}
