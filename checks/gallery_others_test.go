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
