package report

import (
	"encoding/json"
	"fmt"
	"os"
)

// Bench is what go run ./cmd/lab bench measured, as its -out file holds
// it: for each durability (a SQLite journal mode and synchronous setting,
// or a PostgreSQL isolation level) and number of deliverers, the rates and
// the ratios to the bare work over the runs. The workshop page and the
// chart in docs/ are drawn from it.
type Bench struct {
	Command string     `json:"command"`        // what each run ran
	Runs    int        `json:"runs"`           // how many runs, one after another
	When    string     `json:"when,omitempty"` // when the runs ended, UTC, RFC 3339
	Load    string     `json:"load,omitempty"` // the load averages (1, 5, 15 min) then
	Rows    []BenchRow `json:"rows"`
}

// BenchRow is one durability and deliverer count.
type BenchRow struct {
	// Durability is SQLite's journal and synchronous mode (WAL-NORMAL, …)
	// or a PostgreSQL level (pg-rc, pg-rr, pg-ser).
	Durability string `json:"durability"`
	// Deliverers is how many deliveries run at once.
	Deliverers int `json:"deliverers"`
	// Runs is how many runs the medians and spreads are of.
	Runs int `json:"runs"`
	// Bare is the bare work's events/s: the same credit and a row, in one
	// transaction, without the inbox.
	Bare Spread `json:"bare_events_per_s"`
	// Rates is each load's events/s ("distinct": correct with a new event
	// each time; "repeat": correct answering duplicates).
	Rates map[string]Spread `json:"events_per_s,omitempty"`
	// Ratios is each load's events/s ÷ the bare work's, run by run.
	Ratios map[string]Spread `json:"ratios"`
	// Per1000 is, on PostgreSQL, the distinct load's "retries", "busy"
	// and "errors" per 1,000 events.
	Per1000 map[string]Spread `json:"per_1000,omitempty"`
}

// Spread is a figure over the runs: its median, least and greatest.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// ReadBench reads a file go run ./cmd/lab bench -out wrote.
func ReadBench(path string) (*Bench, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b := &Bench{}
	if err := json.Unmarshal(data, b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b.Rows) == 0 {
		return nil, fmt.Errorf("%s: no measurements", path)
	}
	return b, nil
}
