package correct_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"modernc.org/sqlite"

	"idemlab/correct"
	"idemlab/lab"
)

// BenchmarkSchema compares ways to store the inbox against the bare work,
// in one run so that their ratios share the machine's noise: the inbox as
// a rowid table whose key is a separate unique index (rowid), as its own
// B-tree (WITHOUT ROWID: worowid), either without the foreign key's lookup
// of the account (-nofk, a measurement only: the lesson keeps the foreign
// key), with prepared statements (-prep, against bare-prep), and with 8 KiB
// pages (-p8k, against bare-p8k). Besides events/s it reports the CPU time
// the process spent per delivery (cpu-us/event), which a busy machine
// stretches much less than the wall clock. Run it one count at a time, in a
// loop, to interleave the variants, and compare with benchstat
// (docs/performance.md):
//
//	go test -c -o /tmp/correct.test ./correct
//	for i in 1 2 3 4 5 6 7 8; do /tmp/correct.test -test.run '^$' \
//	    -test.bench 'BenchmarkSchema/WAL-NORMAL/^(bare|rowid|worowid|rowid-nofk|bare-prep|worowid-prep)$/' \
//	    -test.benchtime 0.3s -test.count 1; done > cpu.txt
func BenchmarkSchema(b *testing.B) {
	variants := []string{"bare", "rowid", "worowid", "rowid-nofk", "worowid-nofk", "bare-prep", "rowid-prep", "worowid-prep", "bare-p8k", "worowid-p8k"}
	for _, d := range durabilities {
		for _, deliverers := range []int{1, 8, 64} {
			for _, v := range variants {
				b.Run(fmt.Sprintf("%s/%s/deliverers=%d", d.name, v, deliverers), func(b *testing.B) {
					benchSchema(b, d, v, deliverers)
				})
			}
		}
	}
}

// inboxSchema returns correct.Schema with the inbox as a rowid table or
// WITHOUT ROWID, with or without its foreign key.
func inboxSchema(withoutRowid, fk bool) string {
	s := strings.Replace(correct.Schema, "WITHOUT ROWID, STRICT", "STRICT", -1)
	if withoutRowid {
		s = strings.Replace(s, "PRIMARY KEY (source, event_id)\n) STRICT;", "PRIMARY KEY (source, event_id)\n) WITHOUT ROWID, STRICT;", 1)
	}
	if !fk {
		s = strings.Replace(s, " REFERENCES accounts (id)", "", 1)
	}
	return s
}

func benchSchema(b *testing.B, d durability, variant string, deliverers int) {
	pragmas := d.pragmas
	if strings.HasSuffix(variant, "-p8k") {
		pragmas = "&_pragma=page_size(8192)" + pragmas
	}
	dsn := correct.DSN(filepath.Join(b.TempDir(), "bench.db")) + pragmas
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(1)
	withoutRowid := strings.HasPrefix(variant, "worowid")
	fk := !strings.Contains(variant, "-nofk")
	if _, err := db.Exec(inboxSchema(withoutRowid, fk) + `
		CREATE TABLE entries (account_id INTEGER NOT NULL, amount INTEGER NOT NULL) STRICT;
		INSERT INTO accounts (id) VALUES (1);`); err != nil {
		b.Fatal(err)
	}
	if got := strings.Contains(inboxSchema(withoutRowid, fk), "WITHOUT ROWID"); got != withoutRowid {
		b.Fatalf("schema: WITHOUT ROWID %v, want %v", got, withoutRowid)
	}
	var h lab.Processor
	switch {
	case variant == "bare-prep":
		h = mustPrepare(b, db, false)
	case strings.HasSuffix(variant, "-prep"):
		h = mustPrepare(b, db, true)
	case strings.HasPrefix(variant, "bare"):
		h = bare{db}
	default:
		h = correct.New(db)
	}
	var n atomic.Int64
	deliver := func() {
		e := lab.Event{Source: "provider-a", EventID: fmt.Sprintf("evt-%d", n.Add(1)), AccountID: 1, Amount: 1}
		if o, err := h.Process(context.Background(), e); err != nil || o != lab.Applied {
			b.Errorf("%v, %v", o, err)
		}
	}
	cpu := cpuTime()
	drive(b, deliverers, deliver)
	// CPU time per delivery, from every round b ran (n counts them all): a
	// busy machine stretches events/s, much less the CPU a delivery costs.
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(n.Load()), "cpu-us/event")
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// prepared is correct.Handler's path for a new event, or the bare work,
// with statements prepared once on the pool's connection.
type prepared struct {
	db             *sql.DB
	inbox          bool
	insert, credit *sql.Stmt
}

func mustPrepare(b *testing.B, db *sql.DB, inbox bool) prepared {
	insert := `INSERT INTO entries (account_id, amount) VALUES ($1, $2)`
	if inbox {
		insert = `
		INSERT INTO inbox (source, event_id, account_id, amount)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (source, event_id) DO NOTHING`
	}
	p := prepared{db: db, inbox: inbox}
	var err error
	if p.insert, err = db.Prepare(insert); err != nil {
		b.Fatal(err)
	}
	if p.credit, err = db.Prepare(`
		UPDATE accounts SET balance = balance + $1 WHERE id = $2`); err != nil {
		b.Fatal(err)
	}
	return p
}

func (p prepared) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var res sql.Result
	if p.inbox {
		res, err = tx.StmtContext(ctx, p.insert).ExecContext(ctx, e.Source, e.EventID, e.AccountID, e.Amount)
	} else {
		res, err = tx.StmtContext(ctx, p.insert).ExecContext(ctx, e.AccountID, e.Amount)
	}
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return 0, fmt.Errorf("insert: %d, %v", n, err)
	}
	if _, err := tx.StmtContext(ctx, p.credit).ExecContext(ctx, e.Amount, e.AccountID); err != nil {
		return 0, err
	}
	return lab.Applied, tx.Commit()
}
