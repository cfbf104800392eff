package labtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"idemlab/lab"
)

// Crash tests need a process to die mid-delivery, for real: not an error
// the handler sees, but a SIGKILL that leaves the database file as the
// operating system had it. The test binary re-runs itself as a child
// (CrashChild, selected with -test.run and an environment variable), the
// child delivers through the hooking driver with a crash fault, and the
// hook kills the child at the chosen statement. The parent then opens the
// file again and checks what is there. In rollback-journal mode SQLite
// rolls a hot journal back at the first read after opening, not at the
// open itself (https://sqlite.org/lockingv3.html#hot_journals): the
// parent's first read is when recovery happens. In WAL mode the frames of
// committed transactions left in the WAL are part of the database, and
// those of the transaction that died are not.

// crashEnv carries the crash spec from parent to child.
const crashEnv = "IDEMLAB_CRASH_CHILD"

// crashChildTest is the name of the test that must call CrashChild.
const crashChildTest = "TestCrashChild"

// crashSpec is what the child must do.
type crashSpec struct {
	Session string
	Variant string
	Path    string
	WAL     bool
	Event   lab.Event
	When    When
	N       int
}

// killedMarker is the line a crash child prints just before it kills
// itself, so that the parent knows the death came from the hook (on every
// system, whatever its exit status looks like).
const killedMarker = "idemlab-killed-here"

// answerPrefix starts the line where a child that was not killed reports
// its answer.
const answerPrefix = "idemlab-answer: "

// Crash delivers e in a child process that is killed (SIGKILL) on side when
// of its statement n, and reopens the database afterwards. It reports
// whether the child was killed; a child that was not, because the delivery
// has fewer than n statements, ran clean and answered a. The child's
// transcript, up to its death, becomes part of the run's.
func (db *DB) Crash(e lab.Event, when When, n int) (killed bool, a Answer) {
	tb := db.run.tb
	session := db.run.nextSession()
	spec, err := json.Marshal(crashSpec{Session: session, Variant: db.run.Variant.Name, Path: db.Path, WAL: db.wal, Event: e, When: when, N: n})
	if err != nil {
		tb.Fatalf("crash spec: %v", err)
	}
	out, err := os.CreateTemp(filepath.Dir(db.Path), "child-*.out")
	if err != nil {
		tb.Fatalf("crash child output: %v", err)
	}
	defer out.Close()

	// The parent lets go of the file while the child works on it, as a
	// restarted service would find it.
	if err := db.sql.Close(); err != nil {
		tb.Fatalf("closing before the crash: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+crashChildTest+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+string(spec))
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	db.reopen()

	data, err := os.ReadFile(out.Name())
	if err != nil {
		tb.Fatalf("reading the crash child's output: %v", err)
	}
	text, answer, found := strings.Cut(string(data), answerPrefix)
	killedByHook := strings.Contains(text, killedMarker+"\n")
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line != "" && line != killedMarker && !strings.HasPrefix(line, "PASS") && !strings.HasPrefix(line, "ok ") {
			db.run.Transcript.Note("", line, "")
		}
	}
	var exitErr *exec.ExitError
	switch {
	case killedByHook && errors.As(runErr, &exitErr):
		db.run.Transcript.Note("", "(the process was killed: "+exitErr.String()+"; reopening the database)", "")
		return true, Answer{}
	case runErr != nil:
		tb.Fatalf("crash child failed: %v\n%s", runErr, data)
	case !found:
		tb.Fatalf("crash child ran clean but gave no answer:\n%s", data)
	}
	var got struct {
		Outcome lab.Outcome
		Err     string
	}
	if err := json.Unmarshal([]byte(strings.SplitN(answer, "\n", 2)[0]), &got); err != nil {
		tb.Fatalf("crash child's answer %q: %v", answer, err)
	}
	a = Answer{Session: session, Event: e, Outcome: got.Outcome}
	if got.Err != "" {
		a.Err = errors.New(got.Err)
	}
	return false, a
}

// reopen starts the service again after a crash: a new connection pool on
// the same file and DSN, and a new handler on it.
func (db *DB) reopen() {
	db.sql = db.openPool()
	db.proc = db.run.Variant.New(db.sql)
}

// CrashChild is the child side of Crash. A test named crashChildTest calls
// it with every variant; outside a crash child it skips. In a child it opens
// the database the parent prepared, delivers the event with a crash fault in
// place, and either dies at the fault or prints its transcript and answer.
func CrashChild(t *testing.T, variants []lab.Variant) {
	raw := os.Getenv(crashEnv)
	if raw == "" {
		t.Skip("runs only as the child process of a Crash scenario")
	}
	var spec crashSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatalf("%s: %v", crashEnv, err)
	}
	var v *lab.Variant
	for i := range variants {
		if variants[i].Name == spec.Variant {
			v = &variants[i]
		}
	}
	if v == nil {
		t.Fatalf("crash child: no variant %q", spec.Variant)
	}
	r := NewRun(t, *v)
	db := r.attach(spec.Path, spec.WAL)
	db.Inject(Fault{When: spec.When, N: spec.N, crash: true})
	a := db.deliver(spec.Session, spec.Event, 0)
	fmt.Print(r.Transcript.String())
	errText := ""
	if a.Err != nil {
		errText = a.Err.Error()
	}
	answer, _ := json.Marshal(struct {
		Outcome lab.Outcome
		Err     string
	}{a.Outcome, errText})
	fmt.Printf("%s%s\n", answerPrefix, answer)
	db.close()
}

// die prints the transcript so far and kills the process.
func (db *DB) die(s *stmt, w When) {
	if w == Before {
		db.run.Transcript.StepNote(s, "<killed before it ran>")
	} else {
		db.run.Transcript.Note(s.Session, "", "<killed after it ran, before the handler saw its result>")
	}
	fmt.Print(db.run.Transcript.String())
	fmt.Println(killedMarker)
	os.Stdout.Sync()
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = p.Kill()
	}
	// Kill does not return when it works.
	panic(fmt.Sprintf("lab: crash child could not kill itself: %v", err))
}
