package retention

import (
	"context"
	"database/sql"
	"time"

	"idemlab/exercises/retention"
)

// Purge deletes the inbox rows first delivered more than the redelivery
// window before now: no provider will send those events again. A younger
// row must stay, or its redelivery would be credited a second time; a row
// exactly as old as the window stays too, because the provider may
// redeliver up to the window's end.
func Purge(ctx context.Context, db *sql.DB, now time.Time) (int64, error) {
	res, err := db.ExecContext(ctx, `DELETE FROM inbox WHERE received < $1`,
		now.Add(-retention.RedeliveryWindow).Unix())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Service is this solution, in the shape the exercise's check takes.
var Service = retention.Service{
	Name:   "solutions/retention",
	Schema: Schema,
	DSN:    DSN,
	New:    func(db *sql.DB) retention.Processor { return New(db) },
	Purge:  Purge,
}
