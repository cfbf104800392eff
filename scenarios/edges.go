package scenarios

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"idemlab/lab"
	"idemlab/lab/labtest"
)

// SchemaGuards stands for bugs between validation and the database, one
// per rule that the schema alone enforces: the INSERT into the inbox
// receives, instead of the event's values, a row that breaks the NOT NULL
// or the CHECK of one of its columns — a NULL, empty or oversized source or
// event id, a NULL, zero, fractional or over-the-cap amount, a NULL or
// missing account — or the credit's UPDATE receives an amount that would
// leave the balance NULL, below 0 or over its cap (rewrites injected at the
// driver). Each must be refused by the schema and answered with its kind —
// invalid event, or unknown account for the foreign key — leaving nothing
// behind. A schema without one of its CHECKs or NOT NULLs (each column of
// inbox, and accounts.balance, has both, the foreign key standing for
// account_id's CHECK), its STRICT or its REFERENCES, or a connection
// without foreign keys, lets the row in. (Without the NOT NULL of source
// or event_id a STRICT table still refuses a NULL there: "WITHOUT ROWID
// and STRICT tables work correctly: They disallow NULLs in the PRIMARY
// KEY", https://sqlite.org/quirks.html.)
func SchemaGuards(r *labtest.Run) {
	oversized := strings.Repeat("x", lab.MaxKeyBytes+1)
	cases := []struct {
		name     string
		op       labtest.Op // the statement rewritten: the inbox INSERT, or the credit's UPDATE of accounts
		old, new any
		kind     error
	}{
		{"amount over the cap", labtest.OpInsert, int64(500), int64(lab.MaxAmount + 1), lab.ErrInvalidEvent},
		{"fractional amount", labtest.OpInsert, int64(500), 2.5, lab.ErrInvalidEvent},
		{"empty source", labtest.OpInsert, "provider-a", "", lab.ErrInvalidEvent},
		{"NULL source", labtest.OpInsert, "provider-a", nil, lab.ErrInvalidEvent},
		{"oversized event_id", labtest.OpInsert, "evt-guard", oversized, lab.ErrInvalidEvent},
		{"event_id of 129 bytes in 65 characters", labtest.OpInsert, "evt-guard", strings.Repeat("é", 64) + "x", lab.ErrInvalidEvent},
		{"missing account", labtest.OpInsert, int64(2), int64(99), lab.ErrUnknownAccount},
		{"oversized source", labtest.OpInsert, "provider-a", oversized, lab.ErrInvalidEvent},
		{"empty event_id", labtest.OpInsert, "evt-guard", "", lab.ErrInvalidEvent},
		{"NULL event_id", labtest.OpInsert, "evt-guard", nil, lab.ErrInvalidEvent},
		{"NULL account_id", labtest.OpInsert, int64(2), nil, lab.ErrInvalidEvent},
		{"NULL amount", labtest.OpInsert, int64(500), nil, lab.ErrInvalidEvent},
		{"amount 0", labtest.OpInsert, int64(500), int64(0), lab.ErrInvalidEvent},
		{"NULL balance", labtest.OpUpdate, int64(500), nil, lab.ErrInvalidEvent},
		{"balance below 0", labtest.OpUpdate, int64(500), int64(-1), lab.ErrInvalidEvent},
		{"balance over the cap", labtest.OpUpdate, int64(500), int64(lab.MaxBalance + 1), lab.ErrInvalidEvent},
	}
	// Each case on a database of its own: a rewrite that cannot fire on
	// this handler (it binds the value as another type, or runs no such
	// statement) makes that case alone unable to judge, not the ones after.
	for _, c := range cases {
		r.Case(c.name, func(r *labtest.Run) {
			db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2})
			e := lab.Event{Source: "provider-a", EventID: "evt-guard", AccountID: 2, Amount: 500}
			table := map[labtest.Op]string{labtest.OpInsert: "inbox", labtest.OpUpdate: "accounts"}[c.op]
			db.Inject(labtest.Fault{When: labtest.Before, Op: c.op, Table: table, Rewrite: replaceArg(c.old, c.new)})
			balances, inbox := db.State()
			a := db.Deliver(e, labtest.Delivery{Unchecked: true})
			db.Lift()
			nulls := takeNulls(r, db, balances)
			if changed := stateDiff(db, balances, inbox); nulls != "" || changed != "" {
				r.Errorf("%s: Process(%v) = %v, but the database changed: %s", a.Session, e, a, strings.Join(slices.DeleteFunc([]string{nulls, changed}, func(s string) bool { return s == "" }), "; "))
			}
			if !r.WantError(a, c.kind) {
				r.Errorf("the schema must refuse the row")
			}
			r.WantInbox(db, 0)
			r.WantBalance(db, 2, 0)
		})
	}
	r.Notef("%d rows only the schema could refuse, against the NOT NULL and the CHECK of each column of inbox and of accounts.balance: each refused with its kind, nothing written", len(cases))
}

// takeNulls finds the NULL amounts and balances a schema without its NOT
// NULLs let in, describes them, and puts the rows back as they were (an
// inbox row with a NULL amount deleted, a NULL balance set to what it was
// before): the lab reads those columns as integers, and a NULL would stop
// the run instead of failing the case. It returns "" when there is none.
func takeNulls(r *labtest.Run, db *labtest.DB, balances map[int64]int64) string {
	ctx, cancel := context.WithCancel(context.Background()) // a context that can end: the call is no delivery's
	defer cancel()
	pool := db.Pool()
	var found []string
	rows, err := pool.QueryContext(ctx, `SELECT source, event_id FROM inbox WHERE amount IS NULL`)
	if err == nil {
		for rows.Next() {
			var k lab.Key
			if err = rows.Scan(&k.Source, &k.EventID); err != nil {
				break
			}
			found = append(found, fmt.Sprintf("inbox gained %s with amount NULL", k))
		}
		err = errors.Join(err, rows.Err(), rows.Close())
	}
	if err == nil {
		_, err = pool.ExecContext(ctx, `DELETE FROM inbox WHERE amount IS NULL`)
	}
	for _, id := range slices.Sorted(maps.Keys(balances)) {
		var null bool
		if err == nil {
			err = pool.QueryRowContext(ctx, `SELECT balance IS NULL FROM accounts WHERE id = $1`, id).Scan(&null)
		}
		if err == nil && null {
			found = append(found, fmt.Sprintf("account %d balance %d -> NULL", id, balances[id]))
			_, err = pool.ExecContext(ctx, `UPDATE accounts SET balance = $1 WHERE id = $2`, balances[id], id)
		}
	}
	if err != nil {
		found = append(found, fmt.Sprintf("looking for NULL amounts and balances: %v", err))
	}
	return strings.Join(found, "; ")
}

// stateDiff describes how db's balances and inbox differ from balances
// and inbox, or returns "".
func stateDiff(db *labtest.DB, balances map[int64]int64, inbox []lab.Event) string {
	nowBalances, nowInbox := db.State()
	var diffs []string
	for _, id := range slices.Sorted(maps.Keys(balances)) {
		if nowBalances[id] != balances[id] {
			diffs = append(diffs, fmt.Sprintf("account %d balance %d -> %d", id, balances[id], nowBalances[id]))
		}
	}
	for _, e := range nowInbox {
		if !slices.Contains(inbox, e) {
			diffs = append(diffs, fmt.Sprintf("inbox gained %v", e))
		}
	}
	for _, e := range inbox {
		if !slices.Contains(nowInbox, e) {
			diffs = append(diffs, fmt.Sprintf("inbox lost %v", e))
		}
	}
	return strings.Join(diffs, "; ")
}

// replaceArg returns a rewrite that replaces every argument equal to old
// with new.
func replaceArg(old, new any) func(args []driver.NamedValue) {
	return func(args []driver.NamedValue) {
		for i := range args {
			if args[i].Value == old {
				args[i].Value = new
			}
		}
	}
}

// Edges delivers the events that sit exactly on the limits, which must
// apply, and the first ones past them, which must not: an amount of
// exactly MaxAmount, keys of exactly MaxKeyBytes, a credit that lands a
// balance exactly on MaxBalance, and one unit more; and a repeat for the
// account at its cap, which is a duplicate. A limit moved by one, in the
// validation or in the schema, fails here.
//
// On the limit of the keys, in multi-byte runes, it also delivers twins:
// keys that a handler which normalises keys would make one — the same
// letters in another case (é and É, two bytes each; and ASCII letters
// alone, all that SQLite's lower() and NOCASE fold), with a space before
// or after, é composed (U+00E9) and decomposed (e and U+0301), and a key
// of 4-byte runes — each with an amount of its own, to the account with
// the largest id (2^63-1). Keys are compared byte for byte: each is its own
// event, and applies; each redelivered is its own duplicate.
func Edges(r *labtest.Run) {
	db := r.Open(labtest.Account{ID: 1}, labtest.Account{ID: 2, Balance: lab.MaxBalance - lab.MaxAmount}, labtest.Account{ID: math.MaxInt64})
	longest := strings.Repeat("k", lab.MaxKeyBytes)
	r.WantOutcome(db.Deliver(credit("evt-max", lab.MaxAmount)), lab.Applied)
	r.WantOutcome(db.Deliver(lab.Event{Source: longest, EventID: longest, AccountID: 1, Amount: 1}), lab.Applied)
	toCap := lab.Event{Source: "provider-a", EventID: "evt-to-cap", AccountID: 2, Amount: lab.MaxAmount}
	r.WantOutcome(db.Deliver(toCap), lab.Applied)
	r.WantBalance(db, 2, lab.MaxBalance)
	// A repeat for an account at its cap is still a duplicate: a handler
	// that credits before it checks would hit the cap and answer an error.
	r.WantOutcome(db.Deliver(toCap), lab.Duplicate)
	r.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-past-cap", AccountID: 2, Amount: 1}), lab.ErrInvalidEvent)
	r.WantError(db.Deliver(lab.Event{Source: "provider-a", EventID: "evt-over", AccountID: 1, Amount: lab.MaxAmount + 1}), lab.ErrInvalidEvent)
	r.WantBalance(db, 1, lab.MaxAmount+1)
	r.WantBalance(db, 2, lab.MaxBalance)
	r.WantInbox(db, 3)

	twins := limitTwins()
	var sum int64
	for i, id := range twins {
		e := lab.Event{Source: "provider-a", EventID: id, AccountID: math.MaxInt64, Amount: int64(i + 1)}
		sum += e.Amount
		r.WantOutcome(db.Deliver(e), lab.Applied)
	}
	for i, id := range twins {
		r.WantOutcome(db.Deliver(lab.Event{Source: "provider-a", EventID: id, AccountID: math.MaxInt64, Amount: int64(i + 1)}), lab.Duplicate)
	}
	r.WantBalance(db, math.MaxInt64, sum)
	r.WantInbox(db, 3+len(twins))
	r.Notef("amount %d, %d-byte keys and a balance landing on %d applied; one unit past each refused; %d keys on the limit that differ only by case, whitespace or normal form each applied once to account %d",
		lab.MaxAmount, lab.MaxKeyBytes, lab.MaxBalance, len(twins), int64(math.MaxInt64))
}

// limitTwins are event ids at or next to MaxKeyBytes, made of multi-byte
// runes, that differ only by case, by whitespace around them, or by
// Unicode normal form.
func limitTwins() []string {
	accented := fillKey("evt-case-", composed, lab.MaxKeyBytes)  // é, two bytes
	ascii := fillKey("evt-ascii-", "\u20ac", lab.MaxKeyBytes)    // €, three bytes, which has no case
	spaced := fillKey("evt-space-", "\u20ac", lab.MaxKeyBytes-1) // a byte short of the limit, for the space
	form := fillKey("evt-form-", decomposed, lab.MaxKeyBytes)    // e and a combining acute accent
	return []string{
		accented, strings.ToUpper(accented), // É is two bytes too
		ascii, strings.ToUpper(ascii), // only the ASCII letters differ: all SQLite's lower() and NOCASE fold
		spaced, " " + spaced, spaced + " ",
		form, otherForm(form),
		fillKey("evt-clef-", "\U0001d11e", lab.MaxKeyBytes), // 𝄞, four bytes
	}
}

// fillKey is prefix followed by fill as many times as it fits in n bytes,
// then x's to make exactly n.
func fillKey(prefix, fill string, n int) string {
	k := prefix
	for len(k)+len(fill) <= n {
		k += fill
	}
	return k + strings.Repeat("x", n-len(k))
}
