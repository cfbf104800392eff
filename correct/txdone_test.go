package correct_test

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// TestCancelledAsAStatementStarts is the caller giving up just as a
// statement of the delivery starts, every time rather than now and then.
// database/sql rolls a transaction back on a goroutine of its own once the
// transaction's context is done; when that rollback wins the race with the
// statement, the statement fails with sql.ErrTxDone, and a driver that
// dropped the connection under a cancelled call answers driver.ErrBadConn.
// Neither error says what happened; the context does: the answer must be
// busy, nothing kept, and the redelivery applies the event once (or, for a
// repeat, finds it a duplicate). The lab's fault (Fault.Cancel, side
// Before) cancels the delivery's context as the statement starts and gives
// the handler the error instead of running it.
func TestCancelledAsAStatementStarts(t *testing.T) {
	statements := []struct {
		repeat bool // the event was applied before: the SELECT runs, not the UPDATE
		op     labtest.Op
		table  string
	}{
		{false, labtest.OpInsert, "inbox"},
		{false, labtest.OpUpdate, "accounts"},
		{false, labtest.OpCommit, ""},
		{true, labtest.OpInsert, "inbox"},
		{true, labtest.OpSelect, "inbox"},
		{true, labtest.OpCommit, ""},
	}
	for _, s := range statements {
		for _, told := range []struct {
			err  error
			name string
		}{{sql.ErrTxDone, "ErrTxDone"}, {driver.ErrBadConn, "ErrBadConn"}} {
			what := "a new event"
			if s.repeat {
				what = "a repeat"
			}
			t.Run(strings.Join(strings.Fields(fmt.Sprint(what, " ", s.op, " ", s.table, " ", told.name)), "_"), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := labtest.NewRun(t, correct.Variant)
					db := r.Open()
					e := lab.Event{Source: "provider-a", EventID: "evt-8", AccountID: 1, Amount: 500}
					if s.repeat {
						r.WantOutcome(db.Deliver(e), lab.Applied)
					}
					f := db.Inject(labtest.Fault{When: labtest.Before, Op: s.op, Table: s.table, Cancel: true, Err: told.err})
					a := db.Deliver(e) // a failed delivery must have changed nothing
					db.Lift()
					if f.Fired() != 1 {
						t.Fatalf("the fault %v struck %d statements, want 1", f, f.Fired())
					}
					if !errors.Is(a.Err, lab.ErrBusy) {
						t.Errorf("Process(%v), its caller gone as %s started and told %v = %v, want busy", e, s.op, told.err, a)
					}
					want := lab.Applied
					if s.repeat {
						want = lab.Duplicate
					}
					r.WantOutcome(db.Deliver(e), want)
					r.WantBalance(db, 1, e.Amount)
					r.WantInbox(db, 1)
					r.Close()
					for _, failure := range r.Failures() {
						t.Error(failure)
					}
					if t.Failed() {
						t.Log(r.Transcript.String())
					}
				})
			})
		}
	}
}
