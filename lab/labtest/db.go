package labtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"idemlab/lab"

	"modernc.org/sqlite"
)

// Account is a row of the accounts table as a scenario seeds it.
type Account struct {
	ID      int64
	Balance int64
}

// DB is one variant's database for one scenario: a temporary file with the
// variant's schema, opened with the variant's DSN through the hooking
// connector, and the variant's handler on top of it.
type DB struct {
	// Path is the database file.
	Path string

	run *Run
	sql *sql.DB // the handler's pool
	// own is the lab's own pool on the same database: its reads, seeds and
	// holds run there, apart from the handler's pool, as another process's
	// would, so that a pool the handler limits (to one connection, as
	// correct's doc recommends) is the handler's alone. On PostgreSQL it is
	// the handler's pool; the lab's reads there use the control connection.
	own     *sql.DB
	dsn     string
	wal     bool
	proc    lab.Processor
	initial map[int64]int64 // balances as seeded
	pg      *serverDB       // on a server (PostgreSQL or MariaDB); nil on SQLite

	mu      sync.Mutex
	steps   map[string]int // statements so far, per session
	pages   int64          // max_page_count for the handler's connections; 0 for none
	faults  []*Fault
	sched   *scheduler
	answers []Answer

	// Also guarded by mu: what each session has open (see deliver).
	txs     map[string][]*openTx          // open transactions, per session
	txEnded sync.Cond                     // signalled when a transaction ends; on mu
	busy    map[string]int                // sessions inside Process
	cancels map[string]context.CancelFunc // each delivery's caller, for Fault.Cancel
	blinded map[string]bool               // sessions already reported by blind
	dead    map[string]bool               // sessions a crash fault killed (see crash)
	orphans map[lab.Key]bool              // inbox rows LeaveOrphan wrote, which credit no account
	frozen  string                        // where die kept the files at the instant of a crash
	snap    *sql.Stmt                     // snapshot's query, prepared on sql

	// labCtx is the context of the lab's own statements (its reads, seeds
	// and holds). It can be cancelled, so the driver never takes one of
	// them for a handler's call without a context (see blind), and a wait
	// of theirs for a lock runs on the bubble's clock; closing the
	// database cancels it.
	labCtx    context.Context
	labCancel context.CancelFunc
	stalls    map[string]*stall // deliveries HoldDelivery stops, by session
}

// Open creates a fresh database for the run's variant, seeded with accounts
// (account 1 with balance 0 when none are given). Setting it up is the lab's
// job, not the variant's: a failure here stops the test.
func (r *Run) Open(accounts ...Account) *DB {
	r.tb.Helper()
	return r.open(false, false, accounts)
}

// OpenScheduled is Open for a database whose deliveries the scheduler runs
// (Concurrently, Interleave, Interleavings). On SQLite it is Open: a
// waiting session retries on the bubble's fake clock, which the scheduler
// moves. On PostgreSQL a waiting session waits in real time, and the
// variant's lock_timeout and statement_timeout (which count a lock wait)
// would end a wait that ran longer than they allow, turning it into busy
// on a slow enough machine: a verdict decided by a timing. So its
// connections run with lock_timeout = 0 and statement_timeout = 0 (no
// limit), and a scheduled wait ends only when the scheduler steps the
// session that holds the lock to its COMMIT or ROLLBACK, or when the
// server's deadlock detector ends a cycle of waits (40P01). Where the
// timeout is the scenario (LockTimeout) the database is opened with Open
// and keeps the variant's own.
func (r *Run) OpenScheduled(accounts ...Account) *DB {
	r.tb.Helper()
	return r.open(false, true, accounts)
}

// OpenWAL is Open with the database file in write-ahead-log mode, which
// changes how commits reach the file and how a crash is recovered from. The
// mode is a property of the file, set once at setup; the variant's DSN is
// unchanged.
func (r *Run) OpenWAL(accounts ...Account) *DB {
	r.tb.Helper()
	return r.open(true, false, accounts)
}

// open is Open, in write-ahead-log mode when wal is set (OpenWAL), and on
// a server without the variant's timeouts when untimed (OpenScheduled).
func (r *Run) open(wal, untimed bool, accounts []Account) *DB {
	r.tb.Helper()
	if len(accounts) == 0 {
		accounts = []Account{{ID: 1}}
	}
	if r.pg != nil {
		if wal {
			r.tb.Fatalf("OpenWAL: write-ahead-log mode is SQLite's; a server always logs ahead")
		}
		return r.openServer(accounts, untimed)
	}
	r.dbs++
	path := filepath.Join(r.tempDir(), fmt.Sprintf("lab%d.db", r.dbs))
	dsn := r.Variant.DSN(path)
	// Setting up a database costs a few fsyncs; enumerating interleavings
	// opens hundreds. The first database with a given seed is set up for
	// real, the others are byte copies of it, which is the same thing.
	seed := fmt.Sprint(wal, accounts)
	if tmpl, ok := r.templates[seed]; ok {
		if err := os.WriteFile(path, tmpl, 0o600); err != nil {
			r.tb.Fatalf("copying the set-up database to %s: %v", path, err)
		}
	} else {
		mode, err := setup(dsn, r.Variant.Schema, wal, accounts)
		if err != nil {
			panic(setupFailed(fmt.Sprintf("setting up a database with %s's DSN and schema: %v%s", r.Variant.Name, err, unescaped(dsn, path))))
		}
		if wal && mode != "wal" {
			// Set up again at every open, so that each says so.
			r.Errorf("OpenWAL: PRAGMA journal_mode = WAL on a connection of the variant's DSN = %s, want wal: the DSN keeps "+
				"the file out of write-ahead-log mode, which any process that opens the file may choose for it (this "+
				"database goes on in %s mode)%s", mode, mode, unescaped(dsn, path))
		} else {
			tmpl, err := os.ReadFile(path)
			if err != nil {
				r.tb.Fatalf("reading the set-up database: %v", err)
			}
			r.templates[seed] = tmpl
		}
	}
	db := r.attach(path, wal)
	for _, a := range accounts {
		db.initial[a.ID] = a.Balance
	}
	r.opened = append(r.opened, db)
	return db
}

// attach opens the database file at path, already set up, with the run's
// variant: its DSN through the hooking connector, and its handler on top.
func (r *Run) attach(path string, wal bool) *DB {
	db := r.newDB(path, r.Variant.DSN(path))
	db.wal = wal
	db.sql, db.own = db.openPool(), db.openPool()
	// A story that closes only the handler's pool (db.Pool().Close()), or
	// nothing, leaves none of the lab's connections behind in its bubble.
	r.tb.Cleanup(func() { db.own.Close() })
	db.proc = r.Variant.New(db.sql)
	return db
}

// newDB is a DB of r's cell on the database at path, reached by dsn,
// before its pools are open.
func (r *Run) newDB(path, dsn string) *DB {
	db := &DB{
		Path:    path,
		run:     r,
		dsn:     dsn,
		initial: map[int64]int64{},
		steps:   map[string]int{},
		txs:     map[string][]*openTx{},
		busy:    map[string]int{},
		cancels: map[string]context.CancelFunc{},
		blinded: map[string]bool{},
		dead:    map[string]bool{},
		orphans: map[lab.Key]bool{},
	}
	db.txEnded.L = &db.mu
	db.labCtx, db.labCancel = context.WithCancel(context.Background())
	db.labCtx.Done() // made now, inside the cell's bubble (none on a server)
	r.cell.register(db)
	return db
}

// openPool opens a connection pool on the database through the hooking
// connector.
func (db *DB) openPool() *sql.DB {
	base, err := sqlite.NewConnector(db.dsn)
	if err != nil {
		db.run.tb.Fatalf("sqlite.NewConnector(%q): %v", db.dsn, err)
	}
	return sql.OpenDB(&connector{base: base, hooks: db, begin: beginStatement(db.dsn)})
}

// tempDir returns a new directory for database files, removed when the test
// ends. Where the machine has a memory-backed /dev/shm it is made there: the
// same files, locks and separate connections as on disk, without waiting for
// the disk at every COMMIT, which makes enumerating hundreds of interleavings
// five times faster. The kit never tests power loss, only process death,
// which a memory-backed file survives just as well.
//
// Its name holds what a URI reads otherwise (tempDirPattern), so that every
// database of every scenario is a file whose path a DSN must escape: a
// variant that writes "file:" + path opens another file, or this one
// without its settings, in every cell, not only in the memory exercise's
// check of file names.
func (r *Run) tempDir() string {
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", tempDirPattern); err == nil {
			r.tb.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	dir, err := os.MkdirTemp(r.tb.TempDir(), tempDirPattern)
	if err != nil {
		r.tb.Fatalf("making a directory for the databases: %v", err)
	}
	return dir
}

// tempDirPattern names the lab's directories of database files (see
// tempDir): a '?', which a URI reads as the start of its settings, a '#' as
// the end of its path, a '%' as the start of an escape, a space and a
// letter outside ASCII, which a URI escapes or not depending on who wrote
// it.
const tempDirPattern = "idemlab-?#% é-"

// setup creates the schema and the accounts on a connection of its own, the
// way a migration tool would before the service starts. Whatever that
// connection's settings were, the handler's connections do not inherit them.
// With wal it first turns the file to write-ahead-log mode, and returns the
// mode the file is in after asking: "wal", or the mode a DSN that does not
// allow it (nolock=1, say) kept.
func setup(dsn, schema string, wal bool, accounts []Account) (mode string, err error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if wal {
		if err := db.QueryRow(`PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
			return "", fmt.Errorf("PRAGMA journal_mode = WAL: %w", err)
		}
		mode = strings.ToLower(mode)
	}
	if _, err := db.Exec(schema); err != nil {
		return "", fmt.Errorf("schema: %w", err)
	}
	for _, a := range accounts {
		if _, err := db.Exec(`INSERT INTO accounts (id, balance) VALUES (?, ?)`, a.ID, a.Balance); err != nil {
			return "", fmt.Errorf("account %d: %w", a.ID, err)
		}
	}
	return mode, nil
}

// unescaped says, when dsn does not begin with path escaped as
// lab.SQLiteFile escapes it, what the lab's file names hold that a DSN
// must escape; else "".
func unescaped(dsn, path string) string {
	if strings.HasPrefix(dsn, lab.SQLiteFile(path)) {
		return ""
	}
	return fmt.Sprintf(" (the DSN does not begin with lab.SQLiteFile(path): the lab's databases live in a directory named %q + a number, "+
		"and a URI reads a '?' as the start of its settings, a '#' as the end of its path and a '%%' as an escape)", tempDirPattern)
}

// setupFailed is what Open panics with when the variant's DSN and schema
// cannot set up a database: the variant's failure, not the lab's, so it
// stops the cell (which says why) rather than the test.
type setupFailed string

func (s setupFailed) Error() string { return string(s) }

// beginStatement tells what BEGIN the driver issues for dsn, from its
// _txlock parameter, so that transcripts show the lock mode the variant chose.
func beginStatement(dsn string) string {
	_, query, _ := strings.Cut(dsn, "?")
	values, _ := url.ParseQuery(query)
	switch mode := strings.ToUpper(values.Get("_txlock")); mode {
	case "IMMEDIATE", "EXCLUSIVE":
		return "BEGIN " + mode
	}
	return "BEGIN"
}

// Discard closes the database's pools, the handler's and the lab's own,
// and checks nothing: for a story whose model is not the ledger's, which
// Run.Close would check. A search tells thousands of stories in one cell,
// and every pool left open keeps a goroutine in the cell's bubble until
// the cell ends; for a handler that waits on Go locks the scheduler reads
// every goroutine at each look (quiet.go), and its stories slowed as they
// piled up until the cell stopped.
func (db *DB) Discard() error { return db.close() }

// close closes the database's pools (on a server, closeServer may keep the
// database itself for the next child run). Run.Close calls it after the
// invariants.
func (db *DB) close() error {
	if db.pg != nil {
		return db.run.closeServer(db)
	}
	defer db.labCancel()
	return errors.Join(db.sql.Close(), db.own.Close())
}

// Inject adds a fault for the statements that follow.
func (db *DB) Inject(f Fault) *Fault {
	db.mu.Lock()
	defer db.mu.Unlock()
	p := &f
	db.faults = append(db.faults, p)
	db.run.injected(db, p) // for Close: did every fault the scenario meant fire?
	return p
}

// Reset empties the inbox, puts every balance back to its seed, and forgets
// faults, limits and answers: the database is as Open left it, without the
// cost of a new file and new connections. A property test that runs
// thousands of short stories starts each one this way.
func (db *DB) Reset() {
	db.run.tb.Helper()
	db.releaseStalls()
	if db.pg != nil {
		// On a server: emptied and seeded again as a kept database is
		// (Server.reseed; on MariaDB by TRUNCATE, never DELETE).
		accounts := make([]Account, 0, len(db.initial))
		for _, id := range slices.Sorted(maps.Keys(db.initial)) {
			accounts = append(accounts, Account{ID: id, Balance: db.initial[id]})
		}
		if err := db.pg.srv.reseed(db.pg.schema, accounts); err != nil {
			db.run.tb.Fatalf("Reset: %v", err)
		}
	} else {
		db.labExec("Reset", `DELETE FROM inbox`)
		for id, b := range db.initial {
			db.labExec("Reset", `UPDATE accounts SET balance = $1 WHERE id = $2`, b, id)
		}
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.faults, db.pages, db.answers = nil, 0, nil
	clear(db.steps)
	clear(db.orphans)
	clear(db.blinded)
}

// labExec runs one of the lab's own writes, never a handler's. On
// PostgreSQL it runs in a READ COMMITTED transaction, whatever level the
// variant's connections have: at SERIALIZABLE the lab's write would take
// predicate locks of its own, from the table in shared memory that the
// deliveries' answers depend on (see pgDB.interference).
func (db *DB) labExec(caller, query string, args ...any) {
	db.run.tb.Helper()
	if db.pg == nil {
		if _, err := db.own.ExecContext(db.labCtx, query, args...); err != nil {
			db.run.tb.Fatalf("%s: %v", caller, err)
		}
		return
	}
	tx, err := db.own.BeginTx(db.labCtx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err == nil {
		_, err = tx.ExecContext(db.labCtx, query, args...)
		err = errors.Join(err, tx.Commit())
	}
	if err != nil {
		db.run.tb.Fatalf("%s: %v", caller, err)
	}
}

// PurgeInbox deletes the whole inbox history, as a retention job would.
// The credits those rows recorded stay in the balances and become the new
// baseline, and the answers about them are forgotten: the invariants hold
// for what the database still remembers.
func (db *DB) PurgeInbox() {
	db.run.tb.Helper()
	db.labExec("PurgeInbox", `DELETE FROM inbox`)
	balances, _ := db.State()
	db.mu.Lock()
	defer db.mu.Unlock()
	for id, b := range balances {
		db.initial[id] = b
	}
	db.answers = nil
	clear(db.orphans)
}

// LeaveOrphan writes e's inbox row, for an account that does not exist,
// on a connection of the lab's with foreign keys off, where SQLite
// enforces none: a row left from before its account was deleted. The
// invariants take it as history, a credit to an account that is gone.
// SQLite only.
func (db *DB) LeaveOrphan(e lab.Event) {
	db.run.tb.Helper()
	if db.pg != nil {
		db.run.tb.Fatalf("LeaveOrphan(%v): on a server, which enforces its foreign keys on every connection", e)
	}
	c, err := db.own.Conn(db.labCtx)
	if err == nil {
		defer c.Close()
		var on int
		if err = c.QueryRowContext(db.labCtx, `PRAGMA foreign_keys`).Scan(&on); err == nil {
			_, err = c.ExecContext(db.labCtx, `PRAGMA foreign_keys = OFF`)
		}
		if err == nil {
			_, err = c.ExecContext(db.labCtx, `INSERT INTO inbox (source, event_id, account_id, amount) VALUES ($1, $2, $3, $4)`,
				e.Source, e.EventID, e.AccountID, e.Amount)
			_, errOn := c.ExecContext(db.labCtx, fmt.Sprintf(`PRAGMA foreign_keys = %d`, on))
			err = errors.Join(err, errOn)
		}
	}
	if err != nil {
		db.run.tb.Fatalf("LeaveOrphan(%v): %v", e, err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.orphans[e.Key()] = true
}

// LimitPages caps the database at n pages for the handler's connections, as
// a full disk would: a write that needs a new page fails with SQLITE_FULL.
// 0 lifts the cap.
func (db *DB) LimitPages(n int64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.pages = n
}

func (db *DB) pageLimit() int64 {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.pages
}

// PageCount returns the number of pages in the database file.
func (db *DB) PageCount() int64 {
	var n int64
	if err := db.own.QueryRowContext(db.labCtx, `PRAGMA page_count`).Scan(&n); err != nil {
		db.run.tb.Fatalf("PRAGMA page_count: %v", err)
	}
	return n
}

// Lift removes every fault, spent or not.
func (db *DB) Lift() {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.faults = nil
}
