package checks_test

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/checks"
	"idemlab/exercises/outbox"
	"idemlab/lab"
	solution "idemlab/solutions/outbox"
)

// Exercise 9: one receipt per credit.
type outboxFix struct {
	name      string
	sendInTx  bool // no outbox: the handler sends, and the mailbox deduplicates
	sendAfter bool // no outbox: the handler sends after its COMMIT, the mailbox deduplicates
	markFirst bool // the relay marks a message sent before sending it
	noDedupe  bool // the mailbox keeps every copy
	// markAll: the relay marks the outbox sent with one statement,
	// UPDATE outbox SET sent = 1 WHERE sent = 0, after sending what it
	// read. Run between deliveries, it marks what it sent. A credit that
	// commits while it sends is marked too, never having been read, and its
	// receipt is never sent.
	markAll bool
	// claim: worried about two relays sending one message, the student has
	// the relay claim what it will send (sent = 2, in one UPDATE …
	// RETURNING), then send and mark each, and give back what it could not
	// send. Two relays at once never send one message twice. But a relay
	// killed between its claim and its sends leaves the claims behind, and
	// no later relay sends them: their receipts never go.
	claim bool
	// plainID: the message id written plainly, source + "/" + event_id,
	// as lab.Key's String renders a key. acme/eu's event x and acme's event
	// eu/x get one id: the second credit's outbox row collides with the
	// first's (the id is the outbox's primary key), and the event can never
	// be credited.
	plainID bool
	// plainMail: the outbox keys its rows apart, but the relay mails each
	// under the plain id, source + "/" + event_id. acme/eu's event x and
	// acme's event eu/x are both credited and both sent, and the mailbox,
	// which drops an id it has seen, keeps one of the two receipts.
	plainMail bool
	// queuedBefore: each outbox row carries queued_at, which the handler
	// stamps in UTC (time.Now().UTC(), as a timestamp should be stored),
	// and the relay sends only what was queued before its run began, so
	// that a run sends a batch and ends, reading the run's start as
	// time.Now() formatted plainly: in the process's zone. In UTC, and
	// east of it, every message is sent by the next run. West of it the
	// run began hours "before" anything was queued: no receipt is ever
	// sent. Only the zone tells it: the story's clock is the same.
	queuedBefore bool
	// recentIDs: the mailbox remembers the ids of the last 64 messages
	// only, since a resend comes seconds after the original and a set of
	// every id grows forever. Blind round 2's receiver_recent_ids: the
	// mail server delivers a receipt but loses the acknowledgement, and
	// the relay's next run comes hours later, after 64 other messages:
	// the resend is no longer among the recent ids, and is kept twice.
	recentIDs bool
	// crcIDs: the mailbox remembers the ids it has seen as their CRC-32
	// (IEEE), four bytes each, not the ids, which can be long. Blind round
	// 3's crc32seen: two credits whose receipt ids share a CRC-32
	// (provider-a/evt-fee72ef6c8dd and provider-a/evt-547c1be46ecd, both
	// 0x95813cb4) are two receipts, and the mailbox drops the second.
	crcIDs bool
	// dayWindow: the mailbox forgets an id a day after it took it in, by
	// the wall clock (time.Now), so that its memory stays bounded. Blind
	// round 3's ttl24h: the mail server delivers a receipt but loses the
	// acknowledgement, then the relay's host is down for a day and a half;
	// its resend arrives past the window, and is kept twice.
	dayWindow bool
	// ringIDs: the mailbox remembers the last 16,384 ids it took in (a
	// ring), since a resend comes seconds after the original. Blind round
	// 3's ring16k: a relay paused after reading a backlog of 20,000
	// receipts, which another relay sends meanwhile, resends the first
	// 3,616 after they left the ring.
	ringIDs bool
	by      []string
}

var outboxFixes = []outboxFix{
	{name: "no-outbox-mailbox-dedupes", sendInTx: true, by: []string{"OneReceiptPerCredit"}},
	{name: "send-after-commit", sendAfter: true, by: []string{"OneReceiptPerCredit"}},
	{name: "relay-marks-sent-first", markFirst: true, by: []string{"OneReceiptPerCredit"}},
	{name: "mailbox-keeps-copies", noDedupe: true, by: []string{"OneReceiptPerCredit"}},
	{name: "relay-marks-all-sent", markAll: true, by: []string{"MailSearch"}},
	{name: "relay-claims", claim: true, by: []string{"MailSearch"}},
	{name: "message-id-written-plainly", plainID: true, by: []string{"MailSearch"}},
	{name: "relay-mails-plain-ids", plainMail: true, by: []string{"MailSearch"}},
	// MailSearch's stories west of UTC reject it; on a machine west of UTC
	// the guarantees that run in the process's own zone do first.
	{name: "relay-compares-utc-with-local", queuedBefore: true, by: []string{"MailSearch", "OneReceiptPerCredit"}},
	{name: "mailbox-remembers-64-ids", recentIDs: true, by: []string{"ResendAfterManyReceipts"}},
	{name: "mailbox-remembers-crc-32s", crcIDs: true, by: []string{"MailSearch"}},
	{name: "mailbox-forgets-after-a-day", dayWindow: true, by: []string{"ResendAfterDays"}},
	{name: "mailbox-remembers-16384-ids", ringIDs: true, by: []string{"ResendAfterManyReceipts"}},
}

func (w outboxFix) service() outbox.Service {
	s := solution.Service
	name := "gallery/outbox/" + w.name
	if w.sendInTx || w.sendAfter {
		s.Variant = func(m outbox.Mailer) lab.Variant {
			return lab.Variant{Name: name, Mistake: "a wrong fix", Schema: solution.Schema, DSN: solution.DSN,
				New: func(db *sql.DB) lab.Processor { return &sending{solution.New(db), db, m, w.sendInTx} }}
		}
		s.Relay = func(context.Context, *sql.DB, outbox.Mailer) error { return nil }
	} else {
		base := s.Variant
		s.Variant = func(m outbox.Mailer) lab.Variant { v := base(m); v.Name = name; return v }
	}
	if w.plainID || w.plainMail {
		s.Receipt = plainReceipt
	}
	if w.queuedBefore {
		s.Variant = func(m outbox.Mailer) lab.Variant {
			return lab.Variant{Name: name, Mistake: "a wrong fix", Schema: strings.Replace(solution.Schema, "sent INTEGER NOT NULL DEFAULT 0",
				"sent INTEGER NOT NULL DEFAULT 0,\n\tqueued_at TEXT NOT NULL", 1), DSN: solution.DSN,
				New: func(db *sql.DB) lab.Processor { return &queueHandler{db: db, queue: stampedUTC} }}
		}
		s.Relay = sendQueuedBefore
	}
	if w.plainID {
		s.Variant = func(m outbox.Mailer) lab.Variant {
			return lab.Variant{Name: name, Mistake: "a wrong fix", Schema: solution.Schema + plainOutboxIDs, DSN: solution.DSN,
				New: func(db *sql.DB) lab.Processor { return solution.New(db) }}
		}
	}
	switch {
	case w.plainMail:
		s.Relay = func(ctx context.Context, db *sql.DB, m outbox.Mailer) error {
			return solution.Relay(ctx, db, plainMailer{m})
		}
	case w.markFirst:
		s.Relay = markThenSend
	case w.markAll:
		s.Relay = sendThenMarkAll
	case w.claim:
		s.Relay = claimThenSend
	}
	if w.noDedupe {
		s.Receiver = func() outbox.Mailbox { return &outbox.Receiver{} }
	}
	switch {
	case w.recentIDs:
		s.Receiver = func() outbox.Mailbox { return &recentMailbox{} }
	case w.crcIDs:
		s.Receiver = func() outbox.Mailbox { return &crcMailbox{} }
	case w.dayWindow:
		s.Receiver = func() outbox.Mailbox { return &windowMailbox{} }
	case w.ringIDs:
		s.Receiver = func() outbox.Mailbox { return &ringMailbox{} }
	}
	return s
}

// recentMailbox keeps one copy of each message whose id is not among the
// last 64 it took in.
type recentMailbox struct {
	recent []string // the ids of the last 64 messages taken in, oldest first
	got    []outbox.Message
}

// Receive takes m in unless its id is among the recent ones.
func (b *recentMailbox) Receive(m outbox.Message) {
	if slices.Contains(b.recent, m.ID) {
		return
	}
	b.recent = append(b.recent, m.ID)
	if len(b.recent) > 64 {
		b.recent = b.recent[1:]
	}
	b.got = append(b.got, m)
}

// Messages returns what the mailbox holds.
func (b *recentMailbox) Messages() []outbox.Message { return b.got }

// crcMailbox keeps one copy of each message whose id's CRC-32 it has not
// seen.
type crcMailbox struct {
	mu   sync.Mutex
	seen map[uint32]bool
	got  []outbox.Message
}

// Receive takes m in unless its id's CRC-32 came before.
func (b *crcMailbox) Receive(m outbox.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := crc32.ChecksumIEEE([]byte(m.ID))
	if b.seen[h] {
		return
	}
	if b.seen == nil {
		b.seen = map[uint32]bool{}
	}
	b.seen[h] = true
	b.got = append(b.got, m)
}

// Messages returns what the mailbox holds.
func (b *crcMailbox) Messages() []outbox.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got
}

// dedupWindow is how long windowMailbox remembers an id.
const dedupWindow = 24 * time.Hour

// windowMailbox keeps one copy of each message whose id it has not taken
// in within the last dedupWindow, by time.Now.
type windowMailbox struct {
	mu    sync.Mutex
	seen  map[string]time.Time // when each id was taken in
	swept int                  // how many ids the last sweep left
	got   []outbox.Message
}

// Receive takes m in unless its id came within the window. Each time the
// ids it remembers have doubled, it forgets those older than the window
// (the student's swept at every message: the same answers, in quadratic
// time).
func (b *windowMailbox) Receive(m outbox.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if at, ok := b.seen[m.ID]; ok && now.Sub(at) < dedupWindow {
		return
	}
	if b.seen == nil {
		b.seen = map[string]time.Time{}
	}
	if len(b.seen) >= 2*b.swept {
		for id, at := range b.seen {
			if now.Sub(at) >= dedupWindow {
				delete(b.seen, id)
			}
		}
		b.swept = len(b.seen)
	}
	b.seen[m.ID] = now
	b.got = append(b.got, m)
}

// Messages returns what the mailbox holds.
func (b *windowMailbox) Messages() []outbox.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got
}

// ringSize is how many ids ringMailbox remembers.
const ringSize = 1 << 14

// ringMailbox keeps one copy of each message whose id is not among the
// last ringSize it took in.
type ringMailbox struct {
	mu   sync.Mutex
	seen map[string]bool
	ring []string // the remembered ids, oldest first once full
	next int      // where the next id goes, once the ring is full
	got  []outbox.Message
}

// Receive takes m in unless its id is in the ring, and puts its id in the
// ring in place of the oldest.
func (b *ringMailbox) Receive(m outbox.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen[m.ID] {
		return
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if len(b.ring) < ringSize {
		b.ring = append(b.ring, m.ID)
	} else {
		delete(b.seen, b.ring[b.next])
		b.ring[b.next] = m.ID
		b.next = (b.next + 1) % ringSize
	}
	b.seen[m.ID] = true
	b.got = append(b.got, m)
}

// Messages returns what the mailbox holds.
func (b *ringMailbox) Messages() []outbox.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got
}

func TestGalleryOutbox(t *testing.T) {
	for _, w := range outboxFixes {
		t.Run("outbox/"+w.name, func(t *testing.T) {
			t.Parallel()
			reject(t, checks.Outbox, w.service(), w.by)
		})
	}
}

// sending is the reference handler, minus the outbox row's purpose: it
// sends the receipt itself, inside its transaction (before COMMIT) or
// after it.
type sending struct {
	p      lab.Processor
	db     *sql.DB
	mailer outbox.Mailer
	inTx   bool
}

func (s *sending) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if s.inTx {
		// Sent before the credit's COMMIT, as the starting point does (here
		// before its transaction begins, which is the same to the mailbox).
		if err := s.mailer.Send(ctx, outbox.Receipt(e)); err != nil {
			return 0, err
		}
	}
	o, err := s.p.Process(ctx, e)
	if err == nil && o == lab.Applied && !s.inTx {
		if err := s.mailer.Send(ctx, outbox.Receipt(e)); err != nil {
			return 0, err
		}
	}
	return o, err
}

// plainReceipt is the receipt whose id is the key written plainly:
// source/event_id.
func plainReceipt(e lab.Event) outbox.Message {
	m := solution.Receipt(e)
	m.ID = e.Source + "/" + e.EventID
	return m
}

// unescapeID turns an id of solution.Receipt into the plain one of
// plainReceipt: its escapes undone, the '/' between source and event id
// kept.
var unescapeID = strings.NewReplacer("%2F", "/", "%25", "%")

// plainOutboxIDs rewrites each outbox row's id, as the handler inserts it,
// into the plain one: in SQL, as unescapeID does. Every '%' of an escaped
// id begins an escape, so replacing %2F first and then %25 undoes exactly
// the escapes.
const plainOutboxIDs = `;
CREATE TRIGGER plain_outbox_id AFTER INSERT ON outbox BEGIN
	UPDATE outbox SET id = replace(replace(NEW.id, '%2F', '/'), '%25', '%') WHERE rowid = NEW.rowid;
END;`

// plainMailer mails each message under its plain id.
type plainMailer struct{ outbox.Mailer }

func (p plainMailer) Send(ctx context.Context, m outbox.Message) error {
	m.ID = unescapeID.Replace(m.ID)
	return p.Mailer.Send(ctx, m)
}

// stampedUTC queues e's receipt in the reference handler's way (see
// queueHandler), its outbox row stamped with the time it was queued, in
// UTC.
func stampedUTC(ctx context.Context, tx *sql.Tx, e lab.Event) error {
	m := solution.Receipt(e)
	_, err := tx.ExecContext(ctx, `INSERT INTO outbox (id, body, queued_at) VALUES ($1, $2, $3)`,
		m.ID, m.Body, time.Now().UTC().Format(time.DateTime))
	return err
}

// sendQueuedBefore sends the unsent messages queued before the run began,
// oldest first, and marks each one sent once the mailer took it; the
// run's start is time.Now() formatted as it comes, in the process's zone.
func sendQueuedBefore(ctx context.Context, db *sql.DB, mailer outbox.Mailer) error {
	began := time.Now().Format(time.DateTime)
	pending, err := unsent(ctx, db, `SELECT id, body FROM outbox WHERE sent = 0 AND queued_at <= $1 ORDER BY queued_at, rowid`, began)
	if err != nil {
		return err
	}
	for _, m := range pending {
		if err := mailer.Send(ctx, m); err != nil {
			return fmt.Errorf("sending %s: %w", m.ID, err)
		}
		if _, err := db.ExecContext(ctx, `UPDATE outbox SET sent = 1 WHERE id = $1`, m.ID); err != nil {
			return err
		}
	}
	return nil
}

// markThenSend marks each waiting message sent, and then sends it.
func markThenSend(ctx context.Context, db *sql.DB, mailer outbox.Mailer) error {
	rows, err := db.QueryContext(ctx, `SELECT id, body FROM outbox WHERE sent = 0 ORDER BY rowid`)
	if err != nil {
		return err
	}
	var pending []outbox.Message
	for rows.Next() {
		var m outbox.Message
		if err := rows.Scan(&m.ID, &m.Body); err != nil {
			rows.Close()
			return err
		}
		pending = append(pending, m)
	}
	rows.Close()
	for _, m := range pending {
		if _, err := db.ExecContext(ctx, `UPDATE outbox SET sent = 1 WHERE id = $1`, m.ID); err != nil {
			return err
		}
		if err := mailer.Send(ctx, m); err != nil {
			return fmt.Errorf("sending %s: %w", m.ID, err)
		}
	}
	return nil
}

// sendThenMarkAll sends what the outbox holds unsent, then marks the outbox
// sent in one statement.
func sendThenMarkAll(ctx context.Context, db *sql.DB, mailer outbox.Mailer) error {
	pending, err := unsent(ctx, db, `SELECT id, body FROM outbox WHERE sent = 0 ORDER BY rowid`)
	if err != nil {
		return err
	}
	for _, m := range pending {
		if err := mailer.Send(ctx, m); err != nil {
			return fmt.Errorf("sending %s: %w", m.ID, err)
		}
	}
	_, err = db.ExecContext(ctx, `UPDATE outbox SET sent = 1 WHERE sent = 0`)
	return err
}

// claimThenSend claims every unsent message (sent = 2) in one statement, so
// that a second relay running at the same time finds none of them, then
// sends each and marks it sent; a failed send gives back what is left.
func claimThenSend(ctx context.Context, db *sql.DB, mailer outbox.Mailer) error {
	claimed, err := unsent(ctx, db, `UPDATE outbox SET sent = 2 WHERE sent = 0 RETURNING id, body`)
	if err != nil {
		return err
	}
	for i, m := range claimed {
		if err := mailer.Send(ctx, m); err != nil {
			for _, back := range claimed[i:] {
				db.ExecContext(ctx, `UPDATE outbox SET sent = 0 WHERE id = $1`, back.ID)
			}
			return fmt.Errorf("sending %s: %w", m.ID, err)
		}
		if _, err := db.ExecContext(ctx, `UPDATE outbox SET sent = 1 WHERE id = $1`, m.ID); err != nil {
			return err
		}
	}
	return nil
}

// unsent reads the messages query returns.
func unsent(ctx context.Context, db *sql.DB, query string, args ...any) ([]outbox.Message, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []outbox.Message
	for rows.Next() {
		var m outbox.Message
		if err := rows.Scan(&m.ID, &m.Body); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
