package labtest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"idemlab/lab"
)

// check verifies the invariants that hold after any scenario, whatever it
// did, and reports each broken one with Errorf:
//
//   - the database passes PRAGMA integrity_check;
//   - no event is stored twice: at most one inbox row per (source, event_id);
//   - no inbox row without its credit and no credit without its row: each
//     account's balance moved by exactly the sum of its inbox amounts (but
//     for the rows LeaveOrphan left, which credit no account);
//   - nothing applied twice: at most one "applied" answer per event;
//   - nothing lost: every event answered "applied" is in the inbox with the
//     payload it was applied with;
//   - a duplicate only for an identical stored payload.
//
// The per-delivery guarantees (a failed attempt or a duplicate leaves the
// database as it was) are checked by Deliver, where the before and after are
// known.
func (db *DB) check() {
	r := db.run
	var result string
	if db.pg != nil {
		// PostgreSQL has no integrity_check; its crash recovery is the
		// server's, and the lab never kills the server.
	} else if err := db.own.QueryRowContext(db.labCtx, `PRAGMA integrity_check`).Scan(&result); err != nil {
		r.Errorf("PRAGMA integrity_check: %v", err)
	} else if result != "ok" {
		r.Errorf("PRAGMA integrity_check = %q, want \"ok\"", result)
	}

	s := db.snapshot()
	db.mu.Lock()
	orphans := maps.Clone(db.orphans)
	db.mu.Unlock()
	stored := map[lab.Key][]lab.Event{}
	credited := map[int64]int64{}
	for _, row := range s.inbox {
		stored[row.Key()] = append(stored[row.Key()], row)
		if !orphans[row.Key()] {
			credited[row.AccountID] += row.Amount
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(stored), compareKeys) {
		if n := len(stored[k]); n > 1 {
			r.Errorf("inbox rows for %s = %d, want at most 1", k, n)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(s.balances)) {
		moved := s.balances[id] - db.initial[id]
		if moved != credited[id] {
			r.Errorf("account %d balance moved by %d, want %d (the sum of its inbox rows)", id, moved, credited[id])
		}
	}
	for id, sum := range credited {
		if _, ok := s.balances[id]; !ok {
			r.Errorf("inbox credits %d to account %d, which does not exist", sum, id)
		}
	}

	db.mu.Lock()
	answers := slices.Clone(db.answers)
	db.mu.Unlock()
	applied := map[lab.Key]int{}
	for _, a := range answers {
		if a.Err != nil {
			continue
		}
		k := a.Event.Key()
		if a.Outcome == lab.Applied {
			applied[k]++
			if applied[k] == 2 {
				r.Errorf("Process(%v) = applied, want duplicate: %s was applied before", a.Event, k)
			}
		}
		want := lab.Event{Source: k.Source, EventID: k.EventID, AccountID: a.Event.AccountID, Amount: a.Event.Amount}
		if rows := stored[k]; !slices.Contains(rows, want) {
			r.Errorf("Process(%v) = %v, but the inbox holds %s", a.Event, a.Outcome, describeRows(k, rows))
		}
	}
}

func describeRows(k lab.Key, rows []lab.Event) string {
	if len(rows) == 0 {
		return "no row for " + k.String()
	}
	return fmt.Sprint(rows)
}

func compareKeys(a, b lab.Key) int {
	return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.EventID, b.EventID))
}
