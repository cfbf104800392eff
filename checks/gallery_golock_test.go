package checks_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"idemlab/checks"
	"idemlab/exercises/checkthenact"
	"idemlab/lab"
)

// TestGalleryGoLock keeps a blind student's wrong fix of exercise 4
// (checks/testdata/blind/round0/checkthenact__mutex.diff): the starting
// point's check-then-act, its statements each on their own, behind a
// sync.Mutex held for the whole of Process. In one process no two
// deliveries pass the check together, so the race is gone. But the credit
// and the inbox row still commit one at a time: a fault or a crash between
// them leaves one without the other. The lab schedules deliveries that
// wait on a Go lock (lab/labtest/golock.go), so the check judges the fix
// for what it does, and rejects it.
func TestGalleryGoLock(t *testing.T) {
	v := checkthenact.Variant
	v.Name, v.Mistake = "gallery/checkthenact/mutex-around-process", "the check-then-act behind a mutex"
	v.Postgres, v.MariaDB = nil, nil
	v.New = func(db *sql.DB) lab.Processor { return &serialised{h: checkthenact.New(db)} }
	reject(t, checks.CheckThenAct, v, []string{"FaultSweep", "Rollback", "Crash", "Cancel", "RaceSearch"})
}

// serialised is a handler behind a mutex of its own.
type serialised struct {
	mu sync.Mutex
	h  lab.Processor
}

func (s *serialised) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.Process(ctx, e)
}
