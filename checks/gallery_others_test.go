package checks_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"idemlab/checks"
	"idemlab/exercises/retention"
	retentionsolution "idemlab/solutions/retention"
)

// Exercise 8: the purge. The handler is the reference solution's; only
// Purge is wrong.
var retentionFixes = []struct {
	name, why string
	where     func(now time.Time) (string, int64)
}{
	{"one-hour-window", "rows older than an hour go",
		func(now time.Time) (string, int64) { return "received < ?", now.Add(-time.Hour).Unix() }},
	{"boundary-off-by-one", "<= instead of <: a row exactly as old as the window goes, though the provider may still redeliver at its end",
		func(now time.Time) (string, int64) {
			return "received <= ?", now.Add(-retention.RedeliveryWindow).Unix()
		}},
	{"milliseconds", "the cutoff in milliseconds, the column in seconds: everything goes",
		func(now time.Time) (string, int64) {
			return "received < ?", now.Add(-retention.RedeliveryWindow).UnixMilli()
		}},
	{"keeps-everything", "a purge that is safe because it deletes nothing",
		func(now time.Time) (string, int64) { return "received < ?", 0 }},
}

// retentionPurges are wrong purges that hold at whole seconds in UTC, one
// purge at a time: only PurgeSearch, which draws the clock's zone, its
// fractions of a second and purges at once, rejects them.
var retentionPurges = []struct {
	name, why string
	purge     func(ctx context.Context, db *sql.DB, now time.Time) (int64, error)
}{
	// A student reads "three days" in RedeliveryWindow's doc and writes
	// three days: now.AddDate(0, 0, -3). In UTC, or any zone without
	// daylight saving, that is 72 hours. In New York across the March
	// change it is 71: an event first delivered at 2026-03-07 07:30 EST may
	// come again until 03-10 08:30 EDT, and a purge at 08:29:59 EDT deletes
	// it (its cutoff, 03-07 08:29:59 EST, is past the event); redelivered,
	// it is credited again. Across November's change it is 73, and rows
	// past their window stay an hour too long.
	{"calendar-days", "the cutoff three calendar days back in now's zone: 71 or 73 hours across a daylight-saving change",
		func(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
			return deleteOlder(ctx, db, now.AddDate(0, 0, -3).Unix())
		}},
	// A student lets SQLite do the date arithmetic, strftime('%s', now,
	// '-3 days'), and hands it now formatted as SQLite reads dates,
	// "2006-01-02 15:04:05": the local wall clock without its zone, which
	// SQLite takes for UTC. In UTC that is right. In Tokyo the cutoff is
	// nine hours late, and rows go nine hours before their window closes;
	// in São Paulo three hours early, and rows stay past it.
	{"sqlite-date-math", "the cutoff computed by SQLite from now's wall clock, its zone dropped",
		func(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
			res, err := db.ExecContext(ctx, `DELETE FROM inbox WHERE received < CAST(strftime('%s', $1, '-3 days') AS INTEGER)`,
				now.Format("2006-01-02 15:04:05"))
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}},
	// A student wants the count for the job's log before the rows are
	// gone, counts them, then deletes them. Alone, the count is the rows
	// deleted. Two nightly jobs that overlap (a slow run and the next one)
	// both count the same rows, one deletes them, and together they say
	// they deleted twice as many.
	{"counts-then-deletes", "the rows counted, then deleted, in two statements: two purges at once both count the same rows",
		func(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
			cutoff := now.Add(-retention.RedeliveryWindow).Unix()
			var n int64
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM inbox WHERE received < $1`, cutoff).Scan(&n); err != nil {
				return 0, err
			}
			_, err := db.ExecContext(ctx, `DELETE FROM inbox WHERE received < $1`, cutoff)
			return n, err
		}},

	// Blind students' fixes (checks/testdata/blind/round0, accepted by the
	// checks of their day).
	//
	// A student keeps "the cutoff's sub-second part" so as not to keep rows
	// up to a second too long: received < (now - 72h) in fractional
	// seconds. But received holds whole seconds, truncated: an event first
	// delivered at 12:00:00.7 is stored as 12:00:00, and may come again
	// until 12:00:00.7 three days later. A purge at 12:00:00.5 that day,
	// 0.2 s before its window closes, has a cutoff of 12:00:00.5, deletes
	// the row, and the redelivery at the window's end is credited again.
	{"subsecond-float-cutoff", "the cutoff in fractional seconds against received's whole seconds: a row goes up to a second before its window closes",
		func(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
			return deleteOlder(ctx, db, float64(now.Add(-retention.RedeliveryWindow).UnixNano())/1e9)
		}},
	// A student wants readable SQL, compares datetimes rather than
	// seconds: datetime(received, 'unixepoch'), which is UTC, against
	// now.Add(-72h) formatted as "2006-01-02 15:04:05", which is now's own
	// wall clock. With now in UTC that is right. With now from time.Now in
	// Moscow (+3) the cutoff is three hours late, and a purge an hour
	// before an event's window closes deletes its row; redelivered, it is
	// credited again. West of UTC rows stay hours past their window.
	{"datetime-string-local-zone", "datetime(received, 'unixepoch'), UTC, compared with the cutoff formatted in now's zone",
		func(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
			res, err := db.ExecContext(ctx, `DELETE FROM inbox WHERE datetime(received, 'unixepoch') < $1`,
				now.Add(-retention.RedeliveryWindow).Format("2006-01-02 15:04:05"))
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}},
}

// retentionVolumePurges are wrong purges with the right cutoff that hold
// while the inbox is small: only PurgeVolume, which purges thousands of rows
// at once, rejects them.
var retentionVolumePurges = []struct {
	name, why string
	purge     func(ctx context.Context, db *sql.DB, now time.Time) (int64, error)
}{
	// Blind students' fixes (checks/testdata/blind/round2, accepted by the
	// checks of their day).
	//
	// A student keeps the write lock short: one batch of at most 1000 rows
	// a run, and the nightly job calls Purge once. A shop with 5000 events
	// a day sees 5000 rows expire a night and 1000 go: the inbox grows by
	// 4000 rows a day, without end.
	{"one-batch-per-night", "one DELETE of at most 1000 expired rows a run: with more expired, some stay",
		func(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
			res, err := db.ExecContext(ctx, `DELETE FROM inbox WHERE rowid IN (
				SELECT rowid FROM inbox WHERE received < $1 LIMIT 1000)`,
				now.Add(-retention.RedeliveryWindow).Unix())
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}},
	// A student bounds the inbox against a flood: the expired rows go, and
	// so does everything beyond the newest 10000. A sale that brings 30000
	// events in a day loses 20000 rows whose windows are open, and each of
	// those events the provider redelivers is credited again.
	{"window-or-newest-10000", "expired rows and all but the newest 10000: with more in their window, some of those go",
		func(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
			res, err := db.ExecContext(ctx, `DELETE FROM inbox WHERE received < $1
				OR rowid NOT IN (SELECT rowid FROM inbox ORDER BY received DESC, rowid DESC LIMIT 10000)`,
				now.Add(-retention.RedeliveryWindow).Unix())
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}},
}

// deleteOlder deletes the inbox rows first delivered before cutoff (Unix
// seconds, whole or fractional).
func deleteOlder[T int64 | float64](ctx context.Context, db *sql.DB, cutoff T) (int64, error) {
	res, err := db.ExecContext(ctx, `DELETE FROM inbox WHERE received < $1`, cutoff)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func TestGalleryRetentionSearch(t *testing.T) {
	for _, w := range retentionPurges {
		t.Run("retention/"+w.name, func(t *testing.T) {
			t.Parallel()
			s := retentionsolution.Service
			s.Name = "gallery/retention/" + w.name
			s.Purge = w.purge
			reject(t, checks.Retention, s, []string{"PurgeSearch"})
		})
	}
}

func TestGalleryRetentionVolume(t *testing.T) {
	for _, w := range retentionVolumePurges {
		t.Run("retention/"+w.name, func(t *testing.T) {
			t.Parallel()
			s := retentionsolution.Service
			s.Name = "gallery/retention/" + w.name
			s.Purge = w.purge
			reject(t, checks.Retention, s, []string{"PurgeVolume"})
		})
	}
}

func TestGalleryRetention(t *testing.T) {
	for _, w := range retentionFixes {
		t.Run("retention/"+w.name, func(t *testing.T) {
			t.Parallel()
			s := retentionsolution.Service
			s.Name = "gallery/retention/" + w.name
			s.Purge = func(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
				cond, arg := w.where(now)
				res, err := db.ExecContext(ctx, `DELETE FROM inbox WHERE `+cond, arg)
				if err != nil {
					return 0, err
				}
				return res.RowsAffected()
			}
			reject(t, checks.Retention, s, []string{"PurgeBoundaries"})
		})
	}
}
