package checks

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the zones a purge is tried in, wherever the check runs

	"pgregory.net/rapid"

	"idemlab/exercises/retention"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
)

// t0 is when the retention check's first event arrives.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// retentionVariant is s's handler as the lab sees one, with a clock, so
// that the whole matrix runs on it.
func retentionVariant(s retention.Service) lab.Variant {
	return retentionAt(s, func() time.Time { return t0 })
}

// retentionAt is s's handler on a clock.
func retentionAt(s retention.Service, clock func() time.Time) lab.Variant {
	return lab.Variant{Name: s.Name, Mistake: "an exercise", Schema: s.Schema, DSN: s.DSN,
		New: func(db *sql.DB) lab.Processor { return clocked{s.New(db), clock} }}
}

// clocked adapts a retention.Processor to lab.Processor: each event is
// delivered at clock's time.
type clocked struct {
	p     retention.Processor
	clock func() time.Time
}

func (c clocked) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	return c.p.Process(ctx, e, c.clock())
}

// Retention is the check of the retention exercise: PurgeBoundaries,
// PurgeVolume, the whole matrix held to the correct standard, then
// PurgeSearch.
//
// PurgeVolume is the dimension PurgeSearch does not vary, the inbox's size:
// one purge of thousands of rows, expired and in their window, at counts
// around the caps a purge might have (see purgeVolume).
//
// PurgeSearch is the ledger property (see ledger_test.go) on a clock, with the
// purge as a background job: 100 stories at -rapid.checks=100. Its
// dimensions:
//
//   - time: the clock starts near a daylight-saving change (New York's and
//     Berlin's spring and autumn ones of 2026), a year's end or mid-year,
//     at a whole second or a fraction of one (0.25, 0.5, 0.999 s), in one
//     of six time zones (UTC, Tokyo +9, Kathmandu +5:45, São Paulo -3, New
//     York and Berlin with daylight saving): every instant the check hands
//     the handler and Purge is in that zone, as time.Now's would be; the
//     clock moves by fractions of a second, hours and days around the
//     redelivery window; a purge runs at an event's window's end, a
//     fraction of a second, a second and an hour either side; and, apart
//     from the clock's, the process's time zone, which time.Now, Time.Local
//     and SQLite's localtime read, a sixth of the stories in each of six
//     zones (see Search);
//   - data, concurrency, pool shape and faults as every ledger property's,
//     with purges among the deliveries: two purges at once, a purge while
//     events are delivered and redelivered, a purge with an error or killed
//     at any of its statements;
//   - the model: a purge keeps every row whose event can still come (its
//     window, from its first delivery, has not closed: a redelivery at the
//     window's very end is still possible) and deletes every row whose
//     window closed a second or more before (the inbox keeps whole
//     seconds); the rows deleted are the ones the purges say they deleted;
//     the provider redelivers an event only within its window.
//
// No story sets the process's time zone (time.Local), which the checks
// running in parallel share: the clock's zone reaches the handler through
// the instants it is given, and the process's is its share's (see Search).
func Retention(c *Checker, s retention.Service) {
	now := t0
	c.Scenario(purgeBoundaries(s, &now), retentionAt(s, func() time.Time { return now }))
	c.Scenario(purgeVolume(s, &now), retentionAt(s, func() time.Time { return now }))
	c.Matrix(retentionVariant(s), nil)
	env := &ledgerEnv{}
	env.newInner = func(db *sql.DB) lab.Processor { return clocked{s.New(db), env.clock} }
	pj := &purgeJobs{env: env, purge: s.Purge}
	env.runJob = pj.run
	spec := &ledgerSpec{
		propertySpec: propertySpec{exercise: "retention", name: "PurgeSearch", stories: 100,
			shows: "rapid's stories of deliveries and purges on a clock in six time zones, at fractions of a second, at every window's edge, at once and under faults: a row stays exactly while its event can come again"},
		env: env, window: redeliveryWindow, jobs: []string{"purge"},
		steps: map[string]func(*ledgerMachine, *rapid.T){"Tick": tick, "Purge": pj.purgeStep, "PurgeAtEdge": pj.purgeAtEdge},
		weights: map[string]int{"New": 3, "Repeat": 2, "Changed": 1, "Twin": 1, "Missing": 1, "Refused": 1, "Fault": 1, "Crash": 1,
			"Race": 3, "FaultRace": 1, "Reconnect": 1, "Lost": 1, "Restart": 1, "Tick": 3, "Purge": 2, "PurgeAtEdge": 4},
		hooks: ledgerHooks{begin: pj.begin, finish: pj.finish,
			settleJobs: func(lm *ledgerMachine, jobs []labtest.Answer) jobSettler { return pj.runOf(lm, jobs) }},
	}
	c.Search(spec.property(), env.variant(retentionVariant(s)))
}

// redeliveryWindow is how long after an event's first delivery the
// provider may send it again.
const redeliveryWindow = retention.RedeliveryWindow

// storyZones are the time zones PurgeSearch runs its clock in: the two
// with daylight saving twice as often as the others.
var storyZones = []string{"UTC", "Asia/Tokyo", "Asia/Kathmandu", "America/Sao_Paulo", "America/New_York", "Europe/Berlin",
	"America/New_York", "Europe/Berlin"}

// dstChanges are the daylight-saving changes of 2026 that PurgeSearch's
// clock starts near, by zone: New York's and Berlin's, spring and autumn.
var dstChanges = map[string][]time.Time{
	"America/New_York": {time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)},
	"Europe/Berlin":    {time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)},
}

// storyStarts are where PurgeSearch's clock may start in zone: near each
// of the zone's daylight-saving changes (or, in a zone without one, near
// another zone's), so that an event delivered then has a window that spans
// it; before a year's end; and mid-year.
func storyStarts(zone string) []time.Time {
	changes := dstChanges[zone]
	if changes == nil {
		changes = append(slices.Clone(dstChanges["America/New_York"]), dstChanges["Europe/Berlin"]...)
	}
	var out []time.Time
	for _, change := range changes {
		out = append(out, change.Add(-redeliveryWindow+30*time.Minute), change.Add(-36*time.Hour), change.Add(-time.Second))
	}
	return append(out, time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC))
}

// subSeconds are the fractions of a second PurgeSearch's clock starts at.
var subSeconds = []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 999 * time.Millisecond}

// ticks are how far the clock moves in a step.
var ticks = []time.Duration{300 * time.Millisecond, 500 * time.Millisecond, time.Second, 59 * time.Minute, time.Hour,
	23 * time.Hour, 24 * time.Hour, 25 * time.Hour, 47 * time.Hour, 71 * time.Hour, redeliveryWindow, 73 * time.Hour}

// edges are where, around an event's window's end, PurgeAtEdge purges.
var edges = []time.Duration{-time.Hour, -time.Second, -500 * time.Millisecond, 0, 500 * time.Millisecond, time.Second, time.Hour}

// showTime renders an instant of the story's clock, in its zone.
func showTime(t time.Time) string { return t.Format("2006-01-02 15:04:05.999 MST") }

// purgeJobs is PurgeSearch's purge: the exercise's Purge, run as a job at
// the story's clock, and what each run said it deleted.
type purgeJobs struct {
	env    *ledgerEnv
	purge  func(ctx context.Context, db *sql.DB, now time.Time) (int64, error)
	mu     sync.Mutex
	purged map[string]int64 // rows each purge's session said it deleted
}

// run runs the purge at the clock's time, as the job e.
func (pj *purgeJobs) run(ctx context.Context, pool *sql.DB, e lab.Event) error {
	n, err := pj.purge(ctx, pool, pj.env.clock())
	if err == nil {
		pj.mu.Lock()
		pj.purged[labtest.SessionOf(ctx)] += n
		pj.mu.Unlock()
	}
	return err
}

// begin draws the story's clock: its zone, where it starts, and the
// fraction of a second it starts at.
func (pj *purgeJobs) begin(lm *ledgerMachine, t *rapid.T) {
	pj.mu.Lock()
	pj.purged = map[string]int64{}
	pj.mu.Unlock()
	zone := rapid.SampledFrom(storyZones).Draw(t, "zone")
	loc, err := time.LoadLocation(zone)
	if err != nil {
		lm.fail(t, "time.LoadLocation(%q): %v", zone, err)
	}
	start := rapid.SampledFrom(storyStarts(zone)).Draw(t, "start")
	start = start.Add(rapid.SampledFrom(subSeconds).Draw(t, "start's fraction of a second")).In(loc)
	lm.env.mu.Lock()
	lm.env.now = start
	lm.env.mu.Unlock()
	lm.story.setup("the clock starts at %s (%s), in time zone %s", showTime(start), start.UTC().Format(time.RFC3339Nano), zone)
}

// finish tells the lab the purges happened: its invariants tie the
// balances to the inbox rows, some of which the purges deleted.
func (pj *purgeJobs) finish(lm *ledgerMachine, t *rapid.T) { lm.db.PurgeInbox() }

// purgedBy returns how many rows the purge on session said it deleted.
func (pj *purgeJobs) purgedBy(session string) int64 {
	pj.mu.Lock()
	defer pj.mu.Unlock()
	return pj.purged[session]
}

// tick moves the clock forward.
func tick(lm *ledgerMachine, t *rapid.T) {
	d := rapid.SampledFrom(ticks).Draw(t, "tick")
	lm.env.mu.Lock()
	lm.env.now = lm.env.now.Add(d)
	now := lm.env.now
	lm.env.mu.Unlock()
	lm.story.add("the clock moves %v, to %s", d, showTime(now))
}

// purgeStep purges the inbox now: plainly, with an error before or after
// one of its statements, with the process killed there (then a purge runs
// again, clean), or two purges at once (and a delivery).
func (pj *purgeJobs) purgeStep(lm *ledgerMachine, t *rapid.T) { pj.purgeNow(lm, t, "") }

// purgeAtEdge moves the clock to an event's window's end, or a fraction
// of a second, a second or an hour either side of it, and purges there.
func (pj *purgeJobs) purgeAtEdge(lm *ledgerMachine, t *rapid.T) {
	keys := sortedKeys(lm.m.stored)
	if len(keys) == 0 {
		t.SkipNow() // no event delivered yet
	}
	k := rapid.SampledFrom(keys).Draw(t, "whose window")
	d := rapid.SampledFrom(edges).Draw(t, "edge")
	at := lm.m.arrived[k].Add(redeliveryWindow + d)
	if at.Before(lm.clockNow()) {
		t.SkipNow() // that instant has passed
	}
	lm.env.mu.Lock()
	lm.env.now = at
	lm.env.mu.Unlock()
	pj.purgeNow(lm, t, fmt.Sprintf("the clock moves to %s, %v from the end of %s's window (first delivered at %s); ",
		showTime(at), d, scenarios.ShowKey(k.EventID), showTime(lm.m.arrived[k])))
}

func (pj *purgeJobs) purgeNow(lm *ledgerMachine, t *rapid.T, prefix string) {
	now := lm.clockNow()
	before := lm.state()
	mark := lm.c.Transcript.Len()
	switch how := rapid.IntRange(0, 4).Draw(t, "how the purge goes"); how {
	case 4:
		sessions := [][]lab.Event{{job("purge 1")}, {job("purge 2")}}
		told := "two purges"
		if rapid.Bool().Draw(t, "and a delivery") {
			e := lm.newOrKnown(t)
			sessions = append(sessions, []lab.Event{e})
			told += " and " + scenarios.ShowEvent(e)
		}
		answers, schedule := lm.db.Interleave(func(step int, parked []string, _ string) string {
			return rapid.SampledFrom(parked).Draw(t, fmt.Sprintf("step %d", step+1))
		}, sessions...)
		var said []string
		for _, a := range answers {
			if isJob(a) {
				said = append(said, a.Session+" "+jobAnswer(a, pj.purgedBy(a.Session)))
			} else {
				said = append(said, fmt.Sprintf("%s %v", a.Session, a))
			}
		}
		lm.story.add("%s%s at %s at once, schedule %s: %s%s", prefix, told, showTime(now), schedule, strings.Join(said, "; "),
			indented(lm.c.Transcript.From(mark)))
		lm.settleRace(t, answers, before, mark)
	case 0, 1:
		a := lm.db.Deliver(job("purge"), labtest.Delivery{Unchecked: true})
		lm.story.add("%spurge at %s: %s", prefix, showTime(now), jobAnswer(a, pj.purgedBy(a.Session)))
		p := pj.runOf(lm, []labtest.Answer{a})
		pj.settle(lm, t, p, before, mark)
	case 2:
		f := labtest.Fault{When: drawWhen(t), N: rapid.IntRange(1, 3).Draw(t, "statement")}
		lm.db.Inject(f)
		a := lm.db.Deliver(job("purge"), labtest.Delivery{Unchecked: true})
		lm.db.Lift()
		lm.story.add("%spurge at %s with a fault %s statement %d: %s%s", prefix, showTime(now), f.When, f.N, jobAnswer(a, pj.purgedBy(a.Session)),
			indented(lm.c.Transcript.From(mark)))
		p := pj.runOf(lm, []labtest.Answer{a})
		pj.settle(lm, t, p, before, mark)
	case 3:
		when, n := drawWhen(t), rapid.IntRange(1, 3).Draw(t, "statement")
		a := lm.db.Deliver(job("purge"), labtest.Delivery{Kill: when, KillAt: n})
		if !a.Killed {
			lm.story.add("%spurge at %s, to be killed %s statement %d, which it never reaches: %s", prefix, showTime(now), when, n,
				jobAnswer(a, pj.purgedBy(a.Session)))
			p := pj.runOf(lm, []labtest.Answer{a})
			pj.settle(lm, t, p, before, mark)
			return
		}
		lm.story.add("%spurge at %s, the process killed %s statement %d, the service restarted%s", prefix, showTime(now), when, n,
			indented(lm.c.Transcript.From(mark)))
		lm.settle(t, nil, mark, &purgeRun{at: now})
		pj.purgeNow(lm, t, "then ")
	}
}

// jobAnswer renders a job's answer: done (with what it says it did), or its
// error.
func jobAnswer(a labtest.Answer, purged int64) string {
	if a.Err == errJobDone || (a.Err != nil && a.Err.Error() == errJobDone.Error()) {
		return report.Count(int(purged), "row", "rows") + " deleted"
	}
	return a.String()
}

// settle settles a step of purges alone: the ledger as the model says,
// the rows the purges were to delete gone, and what they said they
// deleted what went.
func (pj *purgeJobs) settle(lm *ledgerMachine, t *rapid.T, p *purgeRun, before ledgerState, mark int) {
	lm.settle(t, nil, mark, p)
	if why := p.after(lm, before); why != "" {
		lm.fail(t, "%s%s", why, lm.excerpt(mark))
	}
}

// purgeRun is a step's purges, all at one instant.
type purgeRun struct {
	at   time.Time
	sure bool  // every purge finished: rows past their window must be gone
	n    int   // how many purges
	said int64 // the rows they said they deleted, together
}

// runOf describes the purges that answered answers.
func (pj *purgeJobs) runOf(lm *ledgerMachine, answers []labtest.Answer) *purgeRun {
	p := &purgeRun{at: lm.clockNow(), sure: true, n: len(answers)}
	var sessions []string
	for _, a := range answers {
		if !slices.Contains(sessions, a.Session) { // a session may purge twice
			sessions = append(sessions, a.Session)
			p.said += pj.purgedBy(a.Session)
		}
		if a.Err != errJobDone {
			p.sure = false
		}
	}
	return p
}

// settle is m after the purge, as far as the database tells: a row whose
// event can still come stays; a row whose window closed a second or more
// before goes (if every purge finished); a row in between is as the
// database has it.
func (p *purgeRun) settle(m *ledgerModel, got ledgerState) *ledgerModel {
	present := map[lab.Key]bool{}
	for _, e := range got.inbox {
		present[e.Key()] = true
	}
	m = m.clone()
	for _, k := range sortedKeys(m.stored) {
		end := m.arrived[k].Add(redeliveryWindow)
		switch {
		case !p.at.After(end): // the event can still come: the row stays
		case p.sure && !p.at.Before(end.Add(time.Second)):
			delete(m.stored, k)
		case !present[k]:
			delete(m.stored, k)
		}
	}
	return m
}

// wrong says which rows the purge got wrong, given the model m before it:
// a row deleted while its event can still come, or (once every purge
// finished) kept a second or more past its window.
func (p *purgeRun) wrong(m *ledgerModel, got ledgerState) []string {
	present := map[lab.Key]bool{}
	for _, e := range got.inbox {
		present[e.Key()] = true
	}
	var out []string
	for _, k := range sortedKeys(m.stored) {
		first := m.arrived[k]
		end := first.Add(redeliveryWindow)
		switch {
		case !p.at.After(end) && !present[k]:
			out = append(out, fmt.Sprintf("Purge(%s) deleted %s, first delivered at %s: its window is open until %s, and the provider may still send it",
				showTime(p.at), scenarios.ShowEvent(m.stored[k]), showTime(first), showTime(end.In(p.at.Location()))))
		case p.sure && !p.at.Before(end.Add(time.Second)) && present[k]:
			out = append(out, fmt.Sprintf("Purge(%s) kept %s, first delivered at %s: its window closed at %s, and history past it must go",
				showTime(p.at), scenarios.ShowEvent(m.stored[k]), showTime(first), showTime(end.In(p.at.Location()))))
		}
	}
	return out
}

// after says what is wrong with what the purges said they deleted, if they
// all finished: together, the rows that went.
func (p *purgeRun) after(lm *ledgerMachine, before ledgerState) string {
	if !p.sure {
		return ""
	}
	after := lm.state()
	still := map[lab.Key]bool{}
	for _, e := range after.inbox {
		still[e.Key()] = true
	}
	var gone []string
	for _, e := range before.inbox {
		if !still[e.Key()] {
			gone = append(gone, scenarios.ShowEvent(e))
		}
	}
	if p.said != int64(len(gone)) {
		return fmt.Sprintf("Purge(%s) = %d rows deleted (%s together), want %d: the rows gone are %v", showTime(p.at), p.said,
			report.Count(p.n, "purge", "purges"), len(gone), gone)
	}
	return ""
}

// purgeBoundaries: an event first delivered at t0 may be redelivered up to
// t0 + RedeliveryWindow. A purge at each side of each boundary — just
// after the delivery, an hour later, a second before the window closes, as
// it closes, a second after — must keep the row while a redelivery is
// still possible (the redelivery at the window's end is a duplicate), and
// delete it once it is not. Events of different ages are purged together,
// so that a purge that keeps or deletes them all is seen too.
func purgeBoundaries(s retention.Service, now *time.Time) labtest.Scenario {
	w := retention.RedeliveryWindow
	return labtest.Scenario{
		Name: "PurgeBoundaries",
		Shows: fmt.Sprintf("a purge a second before, at and after the end of an event's %v redelivery window, "+
			"and long before it: the row stays exactly while the event can come again; "+
			"a manual resend after the window is credited again (the limit)", w),
		Run: func(r *labtest.Run) {
			ctx := context.Background()
			for _, at := range []time.Duration{0, time.Second, time.Hour, 24 * time.Hour, w - time.Second, w, w + time.Second, w + time.Hour, 2 * w} {
				r.Case(fmt.Sprintf("purge at t0+%v", at), func(c *labtest.Run) {
					db := c.Open()
					// evt-1 arrives at t0, evt-2 an hour later: at t0+w+1s
					// the first may go and the second must stay.
					old := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
					young := lab.Event{Source: "provider-a", EventID: "evt-2", AccountID: 1, Amount: 300}
					*now = t0
					c.WantOutcome(db.Deliver(old), lab.Applied)
					*now = t0.Add(time.Hour)
					c.WantOutcome(db.Deliver(young), lab.Applied)
					n, err := s.Purge(ctx, db.Pool(), t0.Add(at))
					if err != nil {
						c.Errorf("Purge(t0+%v): %v", at, err)
						return
					}
					want := 0
					for _, e := range []struct {
						ev      lab.Event
						arrived time.Duration
					}{{old, 0}, {young, time.Hour}} {
						closed := at > e.arrived+w // the window has closed at the purge
						if closed {
							want++
						}
						kept := keeps(db, e.ev)
						switch {
						case kept && closed:
							c.Errorf("Purge(t0+%v) kept %s, first delivered at t0+%v: its window closed at t0+%v, and history past it must go", at, e.ev.Key(), e.arrived, e.arrived+w)
						case !kept && !closed:
							// The provider may still redeliver it, as late
							// as the window's end: it must be a duplicate.
							redelivery := t0.Add(max(at, e.arrived+w))
							*now = redelivery
							a := db.Deliver(e.ev)
							c.Errorf("Purge(t0+%v) deleted %s, first delivered at t0+%v: redelivered at t0+%v, within its window, it was %v, want duplicate",
								at, e.ev.Key(), e.arrived, redelivery.Sub(t0), a)
						}
					}
					if n != int64(want) {
						c.Errorf("Purge(t0+%v) = %d rows deleted, want %d", at, n, want)
					}
					// The lab's invariants tie every balance to the inbox
					// rows that explain it; after a purge they hold for
					// what the database still remembers. PurgeInbox says so
					// (it empties the inbox and takes the balances as the
					// new baseline).
					db.PurgeInbox()
				})
			}
			// The limit no purge lifts (claim C22): a person at the
			// provider resends an event by hand, long after its window.
			// Its row is rightly gone, so the resend is new to the inbox
			// and is credited again. The case holds a purge to that, and
			// says it, so that no one reads the window as a guarantee.
			resent := false
			held := r.Case("a manual resend a week after the window", func(c *labtest.Run) {
				db := c.Open()
				e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
				*now = t0
				c.WantOutcome(db.Deliver(e), lab.Applied)
				resend := t0.Add(w + 7*24*time.Hour)
				if _, err := s.Purge(ctx, db.Pool(), resend); err != nil {
					c.Errorf("Purge(t0+%v): %v", resend.Sub(t0), err)
					return
				}
				if keeps(db, e) {
					return // a row kept past its window: the cases above say so
				}
				db.PurgeInbox() // the balance that remains is the new baseline
				*now = resend
				c.WantOutcome(db.Deliver(e), lab.Applied)
				c.WantBalance(db, 1, 2*e.Amount)
				resent = true
			})
			if held && resent {
				r.Notef("a manual resend a week after its window, its row purged, was credited again: " +
					"a limit of the pattern, not of the purge")
			}
		},
	}
}

// keeps reports whether the inbox still holds e.
func keeps(db *labtest.DB, e lab.Event) bool {
	_, inbox := db.State()
	for _, x := range inbox {
		if x.Key() == e.Key() {
			return true
		}
	}
	return false
}

// volumes are the counts of expired rows, and of rows in their window,
// that PurgeVolume seeds: at and just past the round caps a purge might
// have (a batch of 1000, the newest 10000 kept), and a count that is no
// round number.
var volumes = []int{1000, 1001, 10000, 10001, 12347}

// purgeVolume: an inbox of n rows whose window has closed and n rows whose
// window is open, for each n of volumes, purged once. Every expired row
// must go, every row in its window must stay, and Purge must say how many
// went: a purge that deletes one batch a run leaves an inbox that grows
// without end, and one that keeps only the newest rows re-opens events the
// provider may still send.
//
// The rows are the handler's own: it delivers one event at each of six
// ages (three expired: a second, an hour and two windows past its end;
// three open: at its very end, halfway through, and new), and the lab
// copies each row in one transaction, every column as the handler wrote
// it but the event id, and credits the account with the copies' amounts,
// so that the ledger explains every row.
func purgeVolume(s retention.Service, now *time.Time) labtest.Scenario {
	w := retention.RedeliveryWindow
	ages := []struct {
		name    string
		age     time.Duration
		expired bool
	}{
		{"closed-1s", w + time.Second, true}, {"closed-1h", w + time.Hour, true}, {"closed-long", 3 * w, true},
		{"open-at-end", w, false}, {"open-half", w / 2, false}, {"open-new", 0, false},
	}
	return labtest.Scenario{
		Name: "PurgeVolume",
		Shows: fmt.Sprintf("one purge of an inbox of %v rows whose window has closed and as many in their window: every expired row goes, every other stays",
			volumes),
		Run: func(r *labtest.Run) {
			ctx := context.Background()
			for _, n := range volumes {
				r.Case(fmt.Sprintf("%d and %d rows", n, n), func(c *labtest.Run) {
					db := c.Open()
					at := t0.Add(4 * w) // the purge's instant
					var events []lab.Event
					for i, a := range ages {
						e := lab.Event{Source: "provider-a", EventID: a.name, AccountID: 1, Amount: int64(i + 1)}
						*now = at.Add(-a.age)
						c.WantOutcome(db.Deliver(e), lab.Applied)
						events = append(events, e)
					}
					// n rows of each kind, split among its three ages.
					copies := map[string]int{}
					for i, a := range ages {
						copies[a.name] = n/3 - 1 // the delivered row is one
						if i%3 == 0 {
							copies[a.name] += n % 3
						}
					}
					if err := copyRows(ctx, db.Pool(), events, copies); err != nil {
						c.Errorf("seeding the inbox: %v", err)
						return
					}
					*now = at
					deleted, err := s.Purge(ctx, db.Pool(), at)
					if err != nil {
						c.Errorf("Purge(%s) over %d expired and %d open rows: %v", showTime(at), n, n, err)
						return
					}
					_, inbox := db.State()
					kept := map[string]int{}
					var lost lab.Event // a row deleted in its window, if any
					present := map[lab.Key]bool{}
					for _, e := range inbox {
						present[e.Key()] = true
						kept[strings.SplitN(e.EventID, "#", 2)[0]]++
					}
					var keptExpired, gone int
					for _, a := range ages {
						if a.expired {
							keptExpired += kept[a.name]
						} else {
							gone += copies[a.name] + 1 - kept[a.name]
						}
					}
					if keptExpired > 0 {
						c.Errorf("Purge(%s) over %d rows whose window has closed (a second to two windows before) and %d in their window kept %d of the expired, want 0: history past its window must go, or the inbox grows without end",
							showTime(at), n, n, keptExpired)
					}
					if gone > 0 {
						for i, a := range ages {
							if a.expired {
								continue
							}
							for j := 0; j <= copies[a.name] && lost.EventID == ""; j++ {
								e := events[i]
								if j > 0 {
									e.EventID = copyID(a.name, j)
								}
								if !present[e.Key()] {
									lost = e
								}
							}
							if lost.EventID != "" {
								first := at.Add(-a.age)
								*now = first.Add(w) // redelivered at its window's end
								got := db.Deliver(lost)
								c.Errorf("Purge(%s) over %d rows whose window has closed and %d in their window deleted %d of those in their window, want 0: %s, first delivered at %s and redelivered at %s, within its window, was %v, want duplicate",
									showTime(at), n, n, gone, scenarios.ShowEvent(lost), showTime(first), showTime(*now), got)
								break
							}
						}
					}
					if want := int64(n + n - len(inbox)); deleted != want {
						c.Errorf("Purge(%s) = %d rows deleted, want %d: the rows gone", showTime(at), deleted, want)
					}
					db.PurgeInbox() // the ledger's baseline is the balances now
				})
			}
		},
	}
}

// copyID is the event id of the i-th copy of the row of event id.
func copyID(id string, i int) string { return fmt.Sprintf("%s#%05d", id, i) }

// copyRows copies, in one transaction, each event's inbox row copies[its
// id] times, each copy with the event id copyID(id, i) and every other
// column as the row has it, and credits the account each copy names with
// its amount.
func copyRows(ctx context.Context, db *sql.DB, events []lab.Event, copies map[string]int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info('inbox') ORDER BY cid`)
	if err != nil {
		return err
	}
	var cols, vals []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		quoted := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		cols = append(cols, quoted)
		if strings.EqualFold(name, "event_id") {
			quoted = `printf('%s#%05d', event_id, n.i)`
		}
		vals = append(vals, quoted)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, e := range events {
		k := copies[e.EventID]
		if k <= 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
			INSERT INTO inbox (`+strings.Join(cols, ", ")+`) SELECT `+strings.Join(vals, ", ")+`
			FROM inbox, n WHERE source = $2 AND event_id = $3`, k, e.Source, e.EventID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`,
			int64(k)*e.Amount, e.AccountID); err != nil {
			return err
		}
	}
	return tx.Commit()
}
