package labtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/naive/effectfirst"
	"idemlab/naive/swallow"
)

// killEnv carries the crash point from TestCrashIsAKill to its child.
const killEnv = "IDEMLAB_KILL_AT"

// killPoint is what the child must do: deliver to the database at Path
// with Variant, and die on side When of statement N.
type killPoint struct {
	Variant string
	Path    string
	WAL     bool
	When    When
	N       int
	Wrong   string // a wrong way of keeping the files, for TestCrashIsAKillCatches
}

// killedMarker is the line the child prints just before it kills itself,
// so that the parent knows the death came from the crash fault.
const killedMarker = "idemlab-killed-here"

// TestCrashIsAKill holds Delivery.Kill's copies to the real thing. At every crash
// point of correct and of naive/effectfirst (which breaks at some of
// them), in both journal modes, the test binary runs itself as a child
// process that delivers with a crash fault: at the fault the lab takes its
// copies of the database files, as Delivery.Kill does, and then the child kills
// itself with SIGKILL. The files SIGKILL left must be the copies, byte for
// byte: the database, its journal or WAL, and the WAL's index. That is why
// Delivery.Kill may stand for a killed process without starting one.
func TestCrashIsAKill(t *testing.T) {
	crashVariants := []lab.Variant{correct.Variant, effectfirst.Variant}
	if raw := os.Getenv(killEnv); raw != "" {
		crashChild(t, raw, crashVariants)
		return
	}
	var mu sync.Mutex
	compared := 0
	t.Run("modes", func(t *testing.T) {
		for _, v := range crashVariants {
			for _, wal := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/wal=%v", v.Name, wal), func(t *testing.T) {
					t.Parallel()
					for k := 1; ; k++ {
						clean := false
						for _, when := range []When{Before, After} {
							p := killPoint{Variant: v.Name, Path: filepath.Join(t.TempDir(), "lab.db"), WAL: wal, When: when, N: k}
							killed, diffs := killAndCompare(t, v, p)
							for _, d := range diffs {
								t.Error(d)
							}
							mu.Lock()
							if killed {
								compared++
							} else {
								clean = true
							}
							mu.Unlock()
						}
						if clean {
							return
						}
					}
				})
			}
		}
	})
	if compared < 20 {
		t.Errorf("TestCrashIsAKill compared %d crash points, want at least 20: the child never died?", compared)
	}
	t.Logf("%d crash points: the lab's copies are the files SIGKILL left, byte for byte", compared)
}

// killAndCompare sets up the database of p, runs the child that dies at p,
// and compares the files it left with the copies the lab took. It reports
// whether the child died (one that did not ran its delivery to the end) and
// every file that differs.
func killAndCompare(t *testing.T, v lab.Variant, p killPoint) (killed bool, diffs []string) {
	t.Helper()
	if mode, err := setup(v.DSN(p.Path), v.Schema, p.WAL, []Account{{ID: 1}}); err != nil || p.WAL && mode != "wal" {
		t.Fatalf("setup(%s) = %q, %v, want the database set up (in WAL mode: %v)", p.Path, mode, err, p.WAL)
	}
	spec, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashIsAKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), killEnv+"="+string(spec))
	out, runErr := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	point := fmt.Sprintf("%s, WAL %v, killed %s statement %d", v.Name, p.WAL, p.When, p.N)
	switch {
	case runErr == nil:
		return false, nil
	case !bytes.Contains(out, []byte(killedMarker+"\n")) || !errors.As(runErr, &exitErr) || exitErr.ExitCode() != -1:
		t.Fatalf("%s: child = %v, want killed by SIGKILL at the fault:\n%s", point, runErr, out)
	}
	copies, _ := filepath.Glob(filepath.Join(filepath.Dir(p.Path), "killed-*"))
	if len(copies) != 1 {
		t.Fatalf("%s: the lab's copies = %v, want one directory", point, copies)
	}
	for _, suffix := range crashFiles {
		left, leftErr := os.ReadFile(p.Path + suffix)
		kept, keptErr := os.ReadFile(filepath.Join(copies[0], filepath.Base(p.Path)+suffix))
		switch {
		case errors.Is(leftErr, os.ErrNotExist) && errors.Is(keptErr, os.ErrNotExist):
		case leftErr != nil || keptErr != nil:
			diffs = append(diffs, fmt.Sprintf("%s: lab.db%s left by SIGKILL: %v; the lab's copy: %v, want both or neither", point, suffix, leftErr, keptErr))
		case !bytes.Equal(left, kept):
			diffs = append(diffs, fmt.Sprintf("%s: lab.db%s left by SIGKILL (%d bytes) differs from the lab's copy (%d bytes)", point, suffix, len(left), len(kept)))
		}
	}
	return true, diffs
}

// TestCrashIsAKillCatches holds the comparison to two wrong ways of keeping
// the files, each of which it must reject at some crash point: copies of
// the database file alone, without its journal or WAL, and copies taken
// too late: after the dead delivery went on, its handler returned and the
// pool closed (which rolls back what was open and, in WAL mode,
// checkpoints the WAL into the database and deletes it).
func TestCrashIsAKillCatches(t *testing.T) {
	if os.Getenv(killEnv) != "" {
		t.Skip("the parent's test")
	}
	for _, wrong := range []string{"database file only", "after closing the pool"} {
		for _, wal := range []bool{false, true} {
			caught := 0
			for k := 1; k <= 2; k++ { // statement 2 runs inside the transaction
				for _, when := range []When{Before, After} {
					p := killPoint{Variant: correct.Variant.Name, Path: filepath.Join(t.TempDir(), "lab.db"), WAL: wal, When: when, N: k, Wrong: wrong}
					if _, diffs := killAndCompare(t, correct.Variant, p); len(diffs) > 0 {
						caught++
					}
				}
			}
			if caught == 0 {
				t.Errorf("copies of %q, WAL %v: no crash point differs from SIGKILL's files, want the comparison to catch them", wrong, wal)
			}
		}
	}
}

// crashChild is the child side: it delivers with a crash fault whose
// copies are followed by a real SIGKILL, or runs clean when the delivery
// has fewer statements than the crash point.
func crashChild(t *testing.T, raw string, crashVariants []lab.Variant) {
	var p killPoint
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatalf("%s: %v", killEnv, err)
	}
	var v lab.Variant
	for _, c := range crashVariants {
		if c.Name == p.Variant {
			v = c
		}
	}
	if v.Name == "" {
		t.Fatalf("crash child: no variant %q", p.Variant)
	}
	die := func() {
		fmt.Println(killedMarker)
		os.Stdout.Sync()
		proc, err := os.FindProcess(os.Getpid())
		if err == nil {
			err = proc.Kill()
		}
		// Kill does not return when it works.
		panic(fmt.Sprintf("crash child could not kill itself: %v", err))
	}
	killProcess = die
	switch p.Wrong {
	case "database file only":
		crashFiles = []string{""}
	case "after closing the pool":
		killProcess = nil
	}
	r := NewRun(t, v)
	db := r.attach(p.Path, p.WAL)
	db.Inject(Fault{When: p.When, N: p.N, Session: "A", crash: true})
	a := db.deliver("A", lab.Event{Source: "provider-a", EventID: "evt-7", AccountID: 1, Amount: 500}, 0)
	if p.Wrong == "after closing the pool" && db.frozen != "" {
		db.close()
		die()
	}
	if a.Err != nil || !strings.Contains(a.String(), "applied") {
		t.Fatalf("crash child ran clean: Process = %v, want applied", a)
	}
	db.close()
}

// TestKilledDeliveryIsGone holds Delivery.Kill to what a dead process means: after
// the kill, nothing the delivery's handler still does — the ROLLBACK of its
// transaction, the error naive/swallow logs and carries on from, its
// answer — runs on the kept files, is logged, or counts as an answer. A lab
// that did not silence the dead session (the swallowed error's log line
// appears) or that recorded the handler's answer fails here; both were
// tried.
func TestKilledDeliveryIsGone(t *testing.T) {
	sc := Scenario{Name: "Killed", Run: func(r *Run) {
		db := r.Open()
		e := lab.Event{Source: "provider-a", EventID: "evt-7", AccountID: 1, Amount: 500}
		a := db.Deliver(e, Delivery{Kill: Before, KillAt: 3}) // before the UPDATE: the INSERT is undone
		if !a.Killed || a.Outcome != 0 || a.Err != nil {
			t.Errorf("Deliver(%v, killed before statement 3) = %+v, want killed and no answer", e, a)
		}
		text := r.Transcript.String()
		for _, gone := range []string{"A4:", "A: answer", "ROLLBACK", "the handler is told", "crediting the account failed"} {
			if strings.Contains(text, gone) {
				t.Errorf("transcript after the kill has %q, want nothing of the dead delivery:\n%s", gone, text)
			}
		}
		db.mu.Lock()
		answers := len(db.answers)
		db.mu.Unlock()
		if answers != 0 {
			t.Errorf("answers after the kill = %d, want 0", answers)
		}
		if n := db.InboxRows(); n != 0 {
			t.Errorf("inbox rows after the kill before the UPDATE = %d, want 0 (the hot journal rolled back)", n)
		}
	}}
	// naive/swallow logs the error it swallows, on its session's lines:
	// after the kill that line must not appear either.
	for _, v := range []lab.Variant{correct.Variant, swallow.Variant} {
		if cell := RunCell(t, sc, v); !cell.Pass {
			t.Errorf("RunCell(Killed, %s) failed: %v", v.Name, cell.Failures)
		}
	}
}
