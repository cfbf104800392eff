package checks

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
	"pgregory.net/rapid"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
)

// memoryVariant is the correct handler on dsn: the DSN is the whole
// memory exercise.
func memoryVariant(dsn func(path string) string) lab.Variant {
	return lab.Variant{Name: "exercises/memory", Mistake: "an exercise", Schema: correct.Schema, DSN: dsn,
		New: func(db *sql.DB) lab.Processor { return correct.New(db) }}
}

// Memory is the check of the memory exercise, in three parts:
//
//   - SecondConnection: the schema made on one connection of the pool, a
//     delivery on another, the pool closed and reopened: the credit is
//     there;
//   - the connection string on file names a URI misreads, the fixed ones
//     of dsnCases, then ones rapid draws (drawDSNPath), each absolute,
//     with a leading "//" or relative to the working directory, and
//     through a symbolic link to a directory and ".." or not: FileName
//     (the DSN opens exactly the file the OS resolves the path to),
//     EveryConnection (foreign keys and a busy timeout on every
//     connection of the pool, one opened after a delivery included),
//     Durable (no journal_mode or synchronous that gives a committed
//     credit away), ImmediateBegin (a transaction the pool begins holds
//     the write lock from BEGIN on) and Checkpoint (in write-ahead-log
//     mode, automatic checkpoints stay on, and after 8,000 pages of
//     commits the -wal file holds at most about four times SQLite's
//     default threshold: walGrowth);
//   - the whole matrix, held to the correct standard, with the correct
//     handler on dsn.
func Memory(c *Checker, dsn func(path string) string) {
	if c.Skips("SecondConnection") {
		// (a process that tells a search's share, or the quick suite's
		// wrong fix that another guarantee rejects: see Skips)
	} else if lines := secondConnection(c, dsn); len(lines) > 0 {
		c.Fail(Failure{Guarantee: "SecondConnection", Lines: lines,
			Shows: "the schema made on one connection of the pool, a delivery on another, then the pool closed and reopened: the credit is there"})
		return // the rest needs one database that every connection shares
	}
	connectionString(c, dsn)
	if c.Done() {
		return
	}
	c.Matrix(memoryVariant(dsn), nil)
}

// secondConnection: the schema is created on one connection of the pool
// while a delivery runs on another, and the credit must survive closing
// and reopening the pool, as it survives a restart of the service.
func secondConnection(c *Checker, dsn func(path string) string) []string {
	t := c.T
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	open := func() *sql.DB {
		c, err := sqlite.NewConnector(dsn(path))
		if err != nil {
			t.Fatal(err)
		}
		return sql.OpenDB(c)
	}
	var failures []string
	fail := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }

	db := open()
	setup, err := db.Conn(ctx) // held, so the handler must use another connection
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.ExecContext(ctx, correct.Schema+`; INSERT INTO accounts (id) VALUES (1)`); err != nil {
		t.Fatalf("schema: %v", err)
	}
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	if got, err := correct.New(db).Process(ctx, e); err != nil || got != lab.Applied {
		fail("Process(%v) on a second connection of the pool = %v, %v, want applied", e, got, err)
	}
	setup.Close()
	db.Close()

	db = open()
	defer db.Close()
	var balance int64
	if err := db.QueryRow(`SELECT balance FROM accounts WHERE id = 1`).Scan(&balance); err != nil || balance != 500 {
		fail("after reopening, the balance of account 1 = %d (%v), want 500", balance, err)
	}
	return failures
}

// The guarantees of the connection string, in the order a check reports
// them, each with what holding it means.
var dsnGuarantees = []struct{ name, shows string }{
	{"FileName", "on a file name a URI misreads ('?', '#', '%', a space, non-ASCII, a leading \"//\"), or a path through a linked directory and \"..\", " +
		"the DSN opens exactly the file the OS resolves the path to, with its settings"},
	{"EveryConnection", "foreign keys and a busy timeout on every connection of the pool, one opened after a delivery included"},
	{"Durable", "no journal_mode or synchronous that lets a crash or a power loss take back a credit already answered applied (MEMORY, OFF, synchronous below FULL)"},
	{"ImmediateBegin", "a transaction the pool begins holds the write lock from BEGIN on, before its first read"},
	{"Checkpoint", fmt.Sprintf("in write-ahead-log mode, automatic checkpoints stay on (wal_autocheckpoint above 0) and frequent: after %d pages of commits "+
		"the -wal file holds at most %d frames (four times SQLite's default threshold of 1000 pages, and a commit); "+
		"without them, or with them rare, the -wal file grows with every commit while a connection stays open", walGrowthCommits*walGrowthPages, walFramesBound)},
}

// A dsnFinding is one broken guarantee of the connection string, on one
// file name.
type dsnFinding struct {
	guarantee string // one of dsnGuarantees
	line      string // "Func(input) = got, want want"
}

// dsnPaths are file names a URI misreads, tried on every DSN before rapid
// draws others. Each is a name inside a fresh directory; a name with a
// '/' makes a directory first, and a leading "//" is the same file
// written with one more slash, which POSIX reads as "/" and a URI after
// "file:" as an authority. SQLite's rules (https://sqlite.org/uri.html,
// "URI Format"): the authority "may be omitted, may be blank, or may be
// localhost", any other is an error; the query string, after a '?', holds
// the parameters; "the fragment is optional and is ignored if present";
// "%HH" escapes are decoded. Seen here (TestGalleryMemory): "file:" and
// the path as it is opens dir/a for dir/a?b.db, and "//" + dir refuses
// the host "tmp".
var dsnPaths = []string{
	"ledger.db", "a?b.db", "a#b.db", "100%25.db", "a%b.db", "with space.db", "ünïcödé.db", "semi;colon&amp=x.db",
	"run#1/ledger.db", "run?1/ledger.db", "//ledger.db", "//run 1/ledger.db",
}

// dsnRelativePaths are file names tried as dsnPaths are, the path handed to
// DSN written relative to the working directory ("../../tmp/…/ledger.db"),
// as a service configured with "data/ledger.db" hands it: "file://" + a
// relative path names a host (SQLite refuses it), where "file:" + the
// same path opens it.
var dsnRelativePaths = []string{"ledger.db", "run?1/ledger.db", "with space.db"}

// dsnLinkedPaths are file names tried as dsnPaths are, the path handed to
// DSN going through a symbolic link to a directory and back up with
// "..": dir/app/data is a link to dir/disk/data, as a service's data
// directory is a link to another disk, and the path is
// dir/app/data/../ledger.db. The OS follows the link before it reads
// "..", so the file is dir/disk/ledger.db (path_resolution(7): ".." is
// the parent of the directory reached so far, the link's target; seen
// here, SQLite opens it too); filepath.Clean, and filepath.Abs, which
// cleans, drop "data/.." by its letters and name dir/app/ledger.db,
// another file.
var dsnLinkedPaths = []string{"ledger.db", "run?1/ledger.db"}

// A dsnCase is a file name the connection string is tried on: a name of
// dsnPaths or one rapid drew, handed to DSN relative to the working
// directory (dsnRelativePaths) or through a linked directory and ".."
// (dsnLinkedPaths).
type dsnCase struct {
	name             string
	relative, linked bool
}

// dsnCases are the fixed file names, in the order they are tried.
func dsnCases() []dsnCase {
	var cases []dsnCase
	for _, name := range dsnPaths {
		cases = append(cases, dsnCase{name: name})
	}
	for _, name := range dsnRelativePaths {
		cases = append(cases, dsnCase{name: name, relative: true})
	}
	for _, name := range dsnLinkedPaths {
		cases = append(cases, dsnCase{name: name, linked: true})
	}
	return cases
}

// connectionString holds dsn to the guarantees of dsnGuarantees on
// dsnCases, then on a -wal file's growth (walGrowth), then on file names
// rapid draws, and fails c with the first finding of each guarantee.
func connectionString(c *Checker, dsn func(path string) string) {
	if !slices.ContainsFunc(dsnGuarantees, func(g struct{ name, shows string }) bool { return !c.Skips(g.name) }) {
		return
	}
	// The directory as the OS names it, every link in it followed, so that
	// the files tryDSN finds under it are named as the OS resolves them.
	root, err := filepath.EvalSymlinks(c.T.TempDir())
	if err != nil {
		c.T.Fatal(err)
	}
	found := map[string]dsnFinding{}
	record := func(f dsnFinding) {
		if _, ok := found[f.guarantee]; !ok {
			found[f.guarantee] = f
		}
	}
	for _, k := range dsnCases() {
		if c.firstOnly && len(found) > 0 {
			break
		}
		for _, f := range tryDSN(root, dsn, k) {
			record(f)
		}
	}
	if !c.Skips("Checkpoint") && (!c.firstOnly || len(found) == 0) {
		if f, ok := walGrowth(root, dsn); ok {
			record(f)
		}
	}
	if !c.firstOnly || len(found) == 0 {
		useLabDefaults()
		defer capShrinking(dsnShrinkTime)()
		rec := &dsnRecorder{}
		var last *dsnFinding
		func() {
			defer func() {
				if p := recover(); p != nil && p != errDSNRapidStop {
					panic(p)
				}
			}()
			rapid.Check(rec, func(t *rapid.T) {
				for _, f := range tryDSN(root, dsn, drawDSNPath(t)) {
					if _, ok := found[f.guarantee]; !ok {
						last = &f
						t.Fatalf("%s", f.line)
					}
				}
			})
		}()
		switch {
		case rec.failed && last != nil:
			last.line += fmt.Sprintf(" (drawn by rapid, -rapid.seed=%s)", rec.seed())
			record(*last)
		case rec.failed: // the search itself broke: the check's trouble, not the DSN's
			c.T.Errorf("the search over file names failed on its own:\n%s", rec.report.String())
		}
	}
	for _, g := range dsnGuarantees {
		if f, ok := found[g.name]; ok && !c.Skips(g.name) {
			c.Fail(Failure{Guarantee: g.name, Shows: g.shows, Lines: []string{f.line}})
		}
	}
}

// dsnShrinkTime caps the time rapid spends on a shorter file name for a
// counterexample of the connection string: each name it tries costs a
// database, the schema and a delivery, and an unshrunk name (three parts
// of ten letters at most) reads well enough.
const dsnShrinkTime = 5 * time.Second

// capShrinking lowers -rapid.shrinktime to at most d, and returns what puts
// it back. Only a check a student runs shrinks at all (useLabDefaults):
// alone, so no other test reads the flag meanwhile.
func capShrinking(d time.Duration) (restore func()) {
	f := flag.Lookup("rapid.shrinktime")
	if f == nil {
		return func() {}
	}
	old := f.Value.String()
	if cur, err := time.ParseDuration(old); err != nil || cur <= d {
		return func() {}
	}
	f.Value.Set(d.String())
	return func() { f.Value.Set(old) }
}

// drawDSNPath draws a file name of one to three parts, each of letters,
// digits and what a URI reads otherwise, with a leading "//" or handed to
// DSN relative to the working directory (see dsnRelativePaths), or
// neither, and through a linked directory and ".." (see dsnLinkedPaths)
// or not.
func drawDSNPath(t *rapid.T) dsnCase {
	chars := []rune("abcdef0125.-_?#% &=;+:'éü日€")
	part := rapid.StringOfN(rapid.SampledFrom(chars), 1, 10, -1).
		Filter(func(s string) bool { return s != "." && s != ".." })
	k := dsnCase{name: strings.Join(rapid.SliceOfN(part, 1, 3).Draw(t, "parts"), "/")}
	switch rapid.IntRange(0, 2).Draw(t, "absolute, with a leading //, or relative") {
	case 1:
		k.name = "//" + k.name
	case 2:
		k.relative = true
	}
	k.linked = rapid.Bool().Draw(t, "through a linked directory and ..")
	return k
}

// tryDSN opens dsn on k's name, inside a fresh directory of root, as the
// lab would (the schema, an account, one delivery by the correct handler)
// and returns what breaks the guarantees of dsnGuarantees there. With
// k.relative, the path DSN is handed is relative to the working
// directory; with k.linked, it goes through a link and ".." (see
// dsnLinkedPaths). The file it must open is the one the OS resolves the
// path to.
func tryDSN(root string, dsn func(path string) string, k dsnCase) (found []dsnFinding) {
	name := k.name
	ctx := context.Background()
	dir, err := os.MkdirTemp(root, "case")
	if err != nil {
		return []dsnFinding{{"FileName", fmt.Sprintf("os.MkdirTemp: %v (the check's trouble, not the DSN's)", err)}}
	}
	defer os.RemoveAll(dir)
	rel := strings.TrimPrefix(name, "//") // the file's name in dir, or in dir/disk when linked
	via, sub := "", rel                   // what the path has before rel; where the file is in dir
	if k.linked {
		if err := os.MkdirAll(dir+"/disk/data", 0o755); err != nil {
			return []dsnFinding{{"FileName", fmt.Sprintf("os.MkdirAll: %v (the check's trouble, not the DSN's)", err)}}
		}
		if err := os.Mkdir(dir+"/app", 0o755); err != nil {
			return []dsnFinding{{"FileName", fmt.Sprintf("os.Mkdir: %v (the check's trouble, not the DSN's)", err)}}
		}
		if err := os.Symlink(dir+"/disk/data", dir+"/app/data"); err != nil {
			return []dsnFinding{{"FileName", fmt.Sprintf("os.Symlink: %v (the check's trouble, not the DSN's)", err)}}
		}
		via, sub = "/app/data/..", "disk/"+rel
	}
	path := dir + via + "/" + rel
	if strings.HasPrefix(name, "//") {
		path = "/" + path
	}
	file := filepath.Join(dir, sub)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return []dsnFinding{{"FileName", fmt.Sprintf("os.MkdirAll: %v (the check's trouble, not the DSN's)", err)}}
	}
	// The OS's own reading of path: its directory, every link followed as
	// it comes, ".." then taken from where the link led.
	if got, err := filepath.EvalSymlinks(path[:strings.LastIndex(path, "/")]); err != nil || got != filepath.Dir(file) {
		return []dsnFinding{{"FileName", fmt.Sprintf("filepath.EvalSymlinks(the directory of %q) = %q, %v, want %q "+
			"(the check's trouble, not the DSN's)", path, got, err, filepath.Dir(file))}}
	}
	fail := func(guarantee, format string, args ...any) {
		found = append(found, dsnFinding{guarantee, fmt.Sprintf(format, args...)})
	}
	// How the failures write the path: dir + "/a?b.db", the directory's own
	// name being the check's.
	shown := fmt.Sprintf("dir + %q", via+"/"+rel)
	if strings.HasPrefix(name, "//") {
		shown = fmt.Sprintf("\"/\" + dir + %q", via+"/"+rel)
	}
	fileShown := fmt.Sprintf("dir + %q", strings.TrimPrefix(file, dir))
	if k.relative {
		// Up from the working directory to "/", then down to path: a path
		// relative to the working directory whatever that is.
		wd, err := os.Getwd()
		if err != nil {
			return []dsnFinding{{"FileName", fmt.Sprintf("os.Getwd: %v (the check's trouble, not the DSN's)", err)}}
		}
		ups := strings.TrimSuffix(strings.Repeat("../", strings.Count(filepath.Clean(wd), "/")), "/")
		path = ups + path
		shown = fmt.Sprintf("%q + dir + %q", ups, via+"/"+name)
	}
	if k.linked {
		shown += ` (dir + "/app/data" a link to dir + "/disk/data")`
	}

	s, err := callDSN(dsn, path)
	if err != nil {
		fail("FileName", "DSN(%s) %v", shown, err)
		return found
	}
	db, err := openDSN(s)
	if err != nil {
		fail("FileName", "sqlite.NewConnector(DSN(%s)) error = %v, want the database at %s", shown, err, fileShown)
		return found
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	// The schema on one connection, held, so that the delivery opens a
	// second: the settings of both, and of a third opened after it, are
	// read below.
	first, err := db.Conn(ctx)
	if err != nil {
		fail("FileName", "DSN(%s): opening a connection: %v, want the database at %s", shown, err, fileShown)
		return found
	}
	defer first.Close()
	if _, err := first.ExecContext(ctx, correct.Schema+`; INSERT INTO accounts (id) VALUES (1)`); err != nil {
		fail("FileName", "DSN(%s): creating the schema: %v, want the database at %s", shown, err, fileShown)
		return found
	}
	e := lab.Event{Source: "provider-a", EventID: "evt-1", AccountID: 1, Amount: 500}
	if got, err := correct.New(db).Process(ctx, e); err != nil || got != lab.Applied {
		fail("FileName", "DSN(%s): Process(%v) = %v, %v, want applied", shown, e, got, err)
		return found
	}
	// The credit is in the file at path, read through a URI the check
	// builds itself, and nothing else was made beside it (but the journal
	// or the write-ahead log SQLite keeps beside an open database, and the
	// check's own link).
	var made []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Type()&fs.ModeSymlink == 0 &&
			p != file+"-journal" && p != file+"-wal" && p != file+"-shm" {
			rel, _ := filepath.Rel(dir, p)
			made = append(made, rel)
		}
		return nil
	})
	want, _ := filepath.Rel(dir, file)
	if !slices.Equal(made, []string{want}) {
		why := "a URI reads a '?' as the start of its settings, a '#' as the end of its path, a '%' as an escape " +
			"and a leading \"//\" as a host"
		if k.linked {
			why = "the OS follows the link app/data before it reads \"..\", so the file is in disk, " +
				"where filepath.Clean (and filepath.Abs, which cleans) drops \"data/..\" by its letters and names " +
				"another file in app: a new, empty database, where every event is credited again"
		}
		fail("FileName", "DSN(%s) made the files %q, want exactly %q: %s", shown, made, []string{want}, why)
		return found
	}
	ref, err := openDSN(lab.SQLiteFile(file) + "?mode=ro")
	if err != nil {
		fail("FileName", "opening the file at %s to read it: %v", fileShown, err)
		return found
	}
	var balance int64
	err = ref.QueryRow(`SELECT balance FROM accounts WHERE id = 1`).Scan(&balance)
	ref.Close()
	if err != nil || balance != 500 {
		fail("FileName", "after DSN(%s) credited 500, the file at %s holds balance %d (%v), want 500", shown, fileShown, balance, err)
		return found
	}

	conns := []*sql.Conn{first}
	for range 2 { // the delivery's connection, idle now, and one opened now
		c, err := db.Conn(ctx)
		if err != nil {
			fail("EveryConnection", "DSN(%s): opening connection %d: %v", shown, len(conns)+1, err)
			return found
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i, c := range conns {
		found = append(found, connectionSettings(ctx, shown, i+1, c)...)
	}
	for _, c := range conns[1:] {
		c.Close() // first stays held: BeginTx must take another
	}
	found = append(found, immediateBegin(ctx, shown, file, db)...)
	first.Close()
	db.Close()
	db = nil
	found = append(found, walDurability(ctx, path, shown, file, dsn)...)
	return found
}

// callDSN calls dsn, and turns its panic into an error.
func callDSN(dsn func(path string) string, path string) (s string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	return dsn(path), nil
}

// openDSN opens a pool on s, as the lab does.
func openDSN(s string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(s)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// connectionSettings reads the settings the lab relies on from connection
// n of a pool opened with DSN(path), and says which are missing. Each is
// a setting of the connection, not of the file, so a DSN (which
// database/sql applies to every connection it opens) is where it belongs,
// and every connection must show it. The facts, from sqlite.org, and
// seen on modernc.org/sqlite v1.62.0 (SQLite 3.54.1), where a setting set
// on one connection is absent from the next (TestMemoryFacts):
//
//   - foreign keys: "Foreign key constraints are disabled by default (for
//     backwards compatibility), so must be enabled separately for each
//     database connection" (https://sqlite.org/foreignkeys.html#fk_enable);
//   - busy timeout: sqlite3_busy_timeout "sets a busy handler that sleeps
//     for a specified amount of time when a table is locked", and "there
//     can only be a single busy handler for a particular database
//     connection"; without one, a connection that finds the database
//     locked fails at once with SQLITE_BUSY
//     (https://sqlite.org/c3ref/busy_timeout.html,
//     https://sqlite.org/pragma.html#pragma_busy_timeout). How long is
//     enough is the matrix's to judge (Concurrent, LockTimeout, Burst);
//   - journal_mode and synchronous: see durabilityLost.
func connectionSettings(ctx context.Context, shown string, n int, c *sql.Conn) (found []dsnFinding) {
	var fk, busy, sync, checkpoint int
	var journal string
	for _, q := range []struct {
		pragma string
		into   any
	}{{"foreign_keys", &fk}, {"busy_timeout", &busy}, {"journal_mode", &journal}, {"synchronous", &sync}, {"wal_autocheckpoint", &checkpoint}} {
		if err := c.QueryRowContext(ctx, "PRAGMA "+q.pragma).Scan(q.into); err != nil {
			return []dsnFinding{{"EveryConnection", fmt.Sprintf("DSN(%s): connection %d: PRAGMA %s: %v", shown, n, q.pragma, err)}}
		}
	}
	which := fmt.Sprintf("connection %d of the pool", n)
	if n == 3 {
		which = "connection 3, opened after a delivery"
	}
	if fk != 1 {
		found = append(found, dsnFinding{"EveryConnection", fmt.Sprintf("DSN(%s): %s: PRAGMA foreign_keys = %d, want 1: "+
			"SQLite checks REFERENCES only on a connection that asked, so an event for a missing account is credited", shown, which, fk)})
	}
	if busy <= 0 {
		found = append(found, dsnFinding{"EveryConnection", fmt.Sprintf("DSN(%s): %s: PRAGMA busy_timeout = %d, want a wait: "+
			"a delivery that finds the write lock taken fails at once with SQLITE_BUSY", shown, which, busy)})
	}
	if why := durabilityLost(journal, sync); why != "" {
		found = append(found, dsnFinding{"Durable", fmt.Sprintf("DSN(%s): %s: journal_mode=%s synchronous=%s, want a commit kept: %s",
			shown, which, journal, labtest.SynchronousName(sync), why)})
	}
	if f, ok := checkpointsOff(shown, which, journal, checkpoint); ok {
		found = append(found, f)
	}
	return found
}

// checkpointsOff finds a connection in write-ahead-log mode whose
// automatic checkpoints are off: "Passing zero or a negative value ...
// disables automatic checkpoints entirely"; the pragma
// wal_autocheckpoint sets it, and "every new database connection defaults
// to having the auto-checkpoint enabled with a threshold of 1000"
// (https://sqlite.org/c3ref/wal_autocheckpoint.html). A checkpoint is what
// copies the log's pages back into the database and lets the log be
// written again from its start (https://sqlite.org/wal.html,
// "Checkpointing"); with none, the log only grows.
func checkpointsOff(shown, which, journal string, checkpoint int) (dsnFinding, bool) {
	if journal != "wal" || checkpoint > 0 {
		return dsnFinding{}, false
	}
	return dsnFinding{"Checkpoint", fmt.Sprintf("DSN(%s): %s: journal_mode=wal wal_autocheckpoint=%d, want automatic checkpoints: "+
		"nothing copies the log back into the database while a connection stays open (the last to close does), "+
		"and the -wal file grows with every commit",
		shown, which, checkpoint)}, true
}

// The -wal file's growth (walGrowth). SQLite checkpoints "automatically
// when the WAL file reaches a threshold size of 1000 pages"
// (https://sqlite.org/wal.html, "Checkpointing"), after the commit that
// reaches it ("if there are N or more frames in the write-ahead log
// file", https://sqlite.org/c3ref/wal_autocheckpoint.html), and a log that
// was checkpointed is written again from its start, not truncated (unless
// journal_size_limit says so; "the WAL file is re-cycled (overwritten)
// when reset and is not truncated", https://sqlite.org/forum/forumpost/72703ef8bd34f070;
// seen here: the file keeps its size). So with the default the -wal file
// stays near 1000 frames (about 4 MB at the default page size of 4096
// bytes) and the last commit, whatever the traffic: seen here, 1,012
// frames after walGrowth's commits, 8,416 with a threshold of 1,000,000.
// The check allows four times that threshold and the commit that crosses
// it (so a DSN's wal_autocheckpoint up to 4000 passes), room for one that
// tunes checkpoints for throughput; a threshold of a million pages (about
// 4 GB) lets the log grow with every commit until the disk is full, and
// every delivery then fails with SQLITE_FULL.
const (
	walFramesBound   = 4*1000 + 2*walGrowthPages // frames the -wal may hold: 4 × the default threshold, and a commit
	walGrowthPages   = 64                        // the pages of the blob each of walGrowth's commits writes
	walGrowthCommits = 125                       // walGrowth's commits: 8,000 pages, about twice walFramesBound
)

// walGrowth judges automatic checkpoints by what they are for: it opens
// dsn on a file another process turned to WAL mode (as walDurability
// does; a DSN that sets its own journal_mode is judged in the mode it
// leaves the file in, and outside WAL mode there is no log to grow),
// commits walGrowthCommits blobs of walGrowthPages pages each, one a
// transaction, to a table of the check's own (emptied after every ten, so
// that the database stays small), and reads the -wal file's size while the
// pool is still open: at most walFramesBound frames, of one page and a
// 24-byte header each, after the 32-byte file header
// (https://sqlite.org/fileformat2.html#walformat).
func walGrowth(root string, dsn func(string) string) (dsnFinding, bool) {
	ctx := context.Background()
	trouble := func(format string, args ...any) (dsnFinding, bool) {
		return dsnFinding{"Checkpoint", fmt.Sprintf(format, args...) + " (the check's trouble, not the DSN's)"}, true
	}
	dir, err := os.MkdirTemp(root, "wal")
	if err != nil {
		return trouble("os.MkdirTemp: %v", err)
	}
	defer os.RemoveAll(dir)
	path := dir + "/ledger.db"
	ref, err := openDSN(lab.SQLiteFile(path))
	if err != nil {
		return trouble("opening %q: %v", path, err)
	}
	_, err = ref.ExecContext(ctx, `PRAGMA journal_mode=WAL`)
	ref.Close()
	if err != nil {
		return trouble("PRAGMA journal_mode=WAL on %q: %v", path, err)
	}
	db, err := openDSN(dsn(path))
	if err != nil {
		return dsnFinding{}, false // FileName's to report
	}
	defer db.Close()
	var journal string
	var pageSize int64
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&journal); err != nil || journal != "wal" {
		return dsnFinding{}, false
	}
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return trouble("PRAGMA page_size: %v", err)
	}
	shown := fmt.Sprintf("dir + %q", "/ledger.db")
	if _, err := db.ExecContext(ctx, `CREATE TABLE wal_probe (b BLOB NOT NULL)`); err != nil {
		return dsnFinding{"Checkpoint", fmt.Sprintf("DSN(%s) on the file in WAL mode: CREATE TABLE: %v", shown, err)}, true
	}
	for i := range walGrowthCommits {
		if _, err := db.ExecContext(ctx, `INSERT INTO wal_probe (b) VALUES (zeroblob(?))`, walGrowthPages*pageSize); err != nil {
			return dsnFinding{"Checkpoint", fmt.Sprintf("DSN(%s) on the file in WAL mode: blob %d: %v", shown, i+1, err)}, true
		}
		if i%10 == 9 {
			if _, err := db.ExecContext(ctx, `DELETE FROM wal_probe`); err != nil {
				return dsnFinding{"Checkpoint", fmt.Sprintf("DSN(%s) on the file in WAL mode: DELETE after blob %d: %v", shown, i+1, err)}, true
			}
		}
	}
	st, err := os.Stat(path + "-wal")
	if err != nil {
		return trouble("os.Stat of the -wal file with the pool open: %v", err)
	}
	if frames := (st.Size() - 32) / (pageSize + 24); frames > walFramesBound {
		return dsnFinding{"Checkpoint", fmt.Sprintf("DSN(%s) on the file in WAL mode: after %d commits of a %d-page blob (%d pages), "+
			"the -wal file holds %d frames (%.1f MB), want at most %d (four times SQLite's default threshold of 1000 pages, "+
			"and the commit that crosses it): the default checkpoint keeps it near 1000 frames, about 4 MB; one so rare, "+
			"or none, lets it grow with every commit until the disk is full, and then every delivery fails with SQLITE_FULL",
			shown, walGrowthCommits, walGrowthPages, walGrowthCommits*walGrowthPages, frames, float64(st.Size())/1e6, walFramesBound)}, true
	}
	return dsnFinding{}, false
}

// walDurability opens dsn again on the file after another process turned
// it to write-ahead-log mode, as equivalent/wal's is; a file keeps the mode
// ("Persistence of WAL mode", https://sqlite.org/wal.html; seen: the DSN's
// next connection reads journal_mode wal). A DSN that sets its own
// journal_mode is read as it leaves the file, and judged in that mode (see
// durabilityLost).
func walDurability(ctx context.Context, path, shown, file string, dsn func(string) string) []dsnFinding {
	ref, err := openDSN(lab.SQLiteFile(file))
	if err != nil {
		return []dsnFinding{{"Durable", fmt.Sprintf("opening %q to turn it to WAL: %v", file, err)}}
	}
	_, err = ref.ExecContext(ctx, `PRAGMA journal_mode=WAL`)
	ref.Close()
	if err != nil {
		return []dsnFinding{{"Durable", fmt.Sprintf("PRAGMA journal_mode=WAL on %q: %v", file, err)}}
	}
	db, err := openDSN(dsn(path))
	if err != nil {
		return []dsnFinding{{"FileName", fmt.Sprintf("sqlite.NewConnector(DSN(%s)) error = %v", shown, err)}}
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		return []dsnFinding{{"FileName", fmt.Sprintf("DSN(%s) on the file in WAL mode: %v", shown, err)}}
	}
	defer c.Close()
	var journal string
	var sync int
	if err := c.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&journal); err != nil {
		return []dsnFinding{{"Durable", fmt.Sprintf("DSN(%s) on the file another process turned to WAL mode: PRAGMA journal_mode: %v, "+
			"want the database read in the mode it is in", shown, err)}}
	}
	if err := c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
		return []dsnFinding{{"Durable", fmt.Sprintf("DSN(%s): PRAGMA synchronous: %v", shown, err)}}
	}
	if why := durabilityLost(journal, sync); why != "" {
		return []dsnFinding{{"Durable", fmt.Sprintf("DSN(%s) on the file in WAL mode: journal_mode=%s synchronous=%s, want a commit kept: %s",
			shown, journal, labtest.SynchronousName(sync), why)}}
	}
	var checkpoint int
	if err := c.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&checkpoint); err != nil {
		return []dsnFinding{{"Checkpoint", fmt.Sprintf("DSN(%s): PRAGMA wal_autocheckpoint: %v", shown, err)}}
	}
	if f, ok := checkpointsOff(shown, "on the file in WAL mode", journal, checkpoint); ok {
		return []dsnFinding{f}
	}
	return nil
}

// durabilityLost says why a connection's journal_mode and synchronous
// give a committed transaction away, or returns "". A kill between
// statements, which the matrix's Crash makes, cannot show it: the process
// would have to die inside COMMIT's own writes to the file, or the machine
// lose power after COMMIT returned. So the settings are read, and refused
// with SQLite's reason (https://sqlite.org/pragma.html#pragma_journal_mode
// and #pragma_synchronous; the Crash column refuses the same, in
// scenarios/crash.go, with a run that shows a transaction half in the file
// under MEMORY and OFF):
//
//   - journal_mode=MEMORY: "If the application using SQLite crashes in the
//     middle of a transaction when the MEMORY journaling mode is set, then
//     the database file will very likely go corrupt";
//   - journal_mode=OFF: "disables the atomic commit and rollback
//     capabilities of SQLite", with the same warning;
//   - synchronous=OFF: SQLite "continues without syncing as soon as it has
//     handed data off to the operating system": the database "might become
//     corrupted if the operating system crashes or the computer loses
//     power";
//   - synchronous=NORMAL in WAL mode: "A transaction committed in WAL mode
//     with synchronous=NORMAL might roll back following a power loss or
//     system crash.";
//   - synchronous=NORMAL on a rollback journal (DELETE, TRUNCATE,
//     PERSIST): SQLite "will still sync at the most critical moments, but
//     less often than in FULL mode. There is a very small (though
//     non-zero) chance that a power failure at just the wrong time could
//     corrupt the database in journal_mode=DELETE on an older
//     filesystem", and DELETE mode is only "probably" safe "on modern
//     filesystems". Only FULL promises that "an operating system crash or
//     power failure will not corrupt the database" (EXTRA adds a sync of
//     the directory). A corrupt file takes back every credit in it, so
//     NORMAL is refused in every journal mode, as each connection runs it:
//     a DSN that sets journal_mode(DELETE) next to synchronous(NORMAL),
//     which keeps the file out of WAL mode whoever turned it so, is judged
//     in DELETE mode, not let through.
//
// modernc.org/sqlite v1.62.0 (SQLite 3.54.1) defaults to journal_mode
// delete and synchronous FULL (2), which keep a commit (TestMemoryFacts).
func durabilityLost(journal string, sync int) string {
	switch {
	case journal == "memory":
		return "journal_mode=MEMORY keeps the rollback journal in RAM: a process that dies inside COMMIT's writes leaves the file half-written, with no journal to roll it back"
	case journal == "off":
		return "journal_mode=OFF keeps no rollback journal: COMMIT is not atomic, and a process that dies inside COMMIT's writes leaves the file half-written"
	case sync == 0:
		return "synchronous=OFF never syncs: a committed credit, or the whole file, may be lost when the machine loses power"
	case journal == "wal" && sync == 1:
		return "synchronous=NORMAL in WAL mode does not sync the WAL at COMMIT: a credit answered applied might roll back after a power loss"
	case sync == 1:
		return "synchronous=NORMAL syncs less often than FULL: SQLite gives a power failure at the wrong moment a chance to corrupt the database, " +
			"and every credit in it; only FULL (or EXTRA) promises it will not"
	}
	return ""
}

// immediateBegin begins a transaction on db as a handler does
// (db.BeginTx), and asks another connection, which does not wait, to
// begin a write: it must find the lock taken. "BEGIN IMMEDIATE … start[s]
// a new write immediately, without waiting for a write statement"; a
// DEFERRED transaction, SQLite's default, takes no lock until it first
// reads or writes (https://sqlite.org/lang_transaction.html). A handler
// that reads before it writes (equivalent/readfirst) relies on the lock:
// under DEFERRED two deliveries both read "not seen yet", and the
// upgrade of one fails with SQLITE_BUSY at once, without the busy timeout
// (TestMemoryFacts shows both answers of the probe).
func immediateBegin(ctx context.Context, shown, file string, db *sql.DB) []dsnFinding {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return []dsnFinding{{"ImmediateBegin", fmt.Sprintf("DSN(%s): db.BeginTx: %v", shown, err)}}
	}
	defer tx.Rollback()
	probe, err := openDSN(lab.SQLiteFile(file)) // no busy_timeout: it does not wait
	if err != nil {
		return []dsnFinding{{"ImmediateBegin", fmt.Sprintf("opening %q: %v", file, err)}}
	}
	defer probe.Close()
	c, err := probe.Conn(ctx)
	if err != nil {
		return []dsnFinding{{"ImmediateBegin", fmt.Sprintf("opening %q: %v", file, err)}}
	}
	defer c.Close()
	_, err = c.ExecContext(ctx, `BEGIN IMMEDIATE`)
	if err == nil {
		c.ExecContext(ctx, `ROLLBACK`)
		return []dsnFinding{{"ImmediateBegin", fmt.Sprintf("DSN(%s): after db.BeginTx, another connection's BEGIN IMMEDIATE = ok, "+
			"want SQLITE_BUSY: the transaction is DEFERRED and takes no lock until it writes, so a handler that reads "+
			"first decides on a read another delivery can change (_txlock=immediate makes BEGIN take it)", shown)}}
	}
	if !dsnIsBusy(err) {
		return []dsnFinding{{"ImmediateBegin", fmt.Sprintf("DSN(%s): after db.BeginTx, another connection's BEGIN IMMEDIATE = %v, want SQLITE_BUSY", shown, err)}}
	}
	return nil
}

// dsnIsBusy reports whether err is SQLite's SQLITE_BUSY.
func dsnIsBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// errDSNRapidStop ends rapid.Check when it calls FailNow on a dsnRecorder.
var errDSNRapidStop = errors.New("rapid gave up")

// dsnRecorder is the rapid.TB a check hands to rapid.Check: it keeps
// rapid's report instead of failing the test, so that a counterexample is
// a failure of the student's work, not of the test binary.
type dsnRecorder struct {
	failed bool
	report strings.Builder
}

func (r *dsnRecorder) Helper()                           {}
func (r *dsnRecorder) Name() string                      { return "connection string" }
func (r *dsnRecorder) Failed() bool                      { return r.failed }
func (r *dsnRecorder) Fail()                             { r.failed = true }
func (r *dsnRecorder) FailNow()                          { r.failed = true; panic(errDSNRapidStop) }
func (r *dsnRecorder) SkipNow()                          { panic(errDSNRapidStop) }
func (r *dsnRecorder) Skip(args ...any)                  { r.SkipNow() }
func (r *dsnRecorder) Skipf(format string, args ...any)  { r.SkipNow() }
func (r *dsnRecorder) Log(args ...any)                   { fmt.Fprintln(&r.report, args...) }
func (r *dsnRecorder) Logf(format string, args ...any)   { fmt.Fprintf(&r.report, format+"\n", args...) }
func (r *dsnRecorder) Error(args ...any)                 { r.failed = true; r.Log(args...) }
func (r *dsnRecorder) Errorf(format string, args ...any) { r.failed = true; r.Logf(format, args...) }
func (r *dsnRecorder) Fatal(args ...any)                 { r.Error(args...); r.FailNow() }
func (r *dsnRecorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }

var dsnReportSeed = regexp.MustCompile(`-rapid\.seed=(\d+)`)

// seed is the seed that replays rapid's counterexample: the one its
// report names, or the -rapid.seed the run was given.
func (r *dsnRecorder) seed() string {
	if m := dsnReportSeed.FindStringSubmatch(r.report.String()); m != nil {
		return m[1]
	}
	if f := flag.Lookup("rapid.seed"); f != nil {
		return f.Value.String()
	}
	return "?"
}
