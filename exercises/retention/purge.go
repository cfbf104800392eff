package retention

import (
	"context"
	"database/sql"
	"time"
)

// RedeliveryWindow is how long a provider keeps redelivering an event it
// got no answer for: three days, counted from the first delivery.
const RedeliveryWindow = 72 * time.Hour

// Purge deletes inbox history that is no longer needed, as of now, and
// returns how many rows it deleted. It runs from a nightly job.
func Purge(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
	res, err := db.ExecContext(ctx, `DELETE FROM inbox`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
