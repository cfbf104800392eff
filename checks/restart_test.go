package checks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"idemlab/exercises/replay"
	"idemlab/lab"
)

// A restart in the lab's stories (FirstAnswer's, ReceiptSearch's Restart)
// is a new handler on the same database, in the same process: whatever
// the handler's package keeps in a variable of its own outlives it, as it
// outlives nothing in production, where a restart is a new process. So
// ProcessRestart ends the process for real: the test binary is started
// again, runs the same test with -exercise.restart naming the database
// file, skips every other guarantee, opens the file with the service's
// DSN, delivers the repeat and prints the answer on a line of its own.

// restartFlag is set in the process a check starts to play the restarted
// service.
var restartFlag = flag.String("exercise.restart", "", "(set by a check for the process it starts) "+
	"be the restarted service on the database `file`: deliver the repeat, print its answer, skip every other guarantee")

// restartMarker begins the line on which the restarted process prints its
// answer, as JSON.
const restartMarker = "idemlab-restarted-answer: "

// restarting reports whether this process was started to be the
// restarted service: every guarantee but ProcessRestart is skipped.
func restarting() bool { return *restartFlag != "" }

// restartAnswer is the answer the restarted process prints.
type restartAnswer struct {
	Receipt replay.Receipt
	Err     string // the error's text, "" if none
}

// processRestartShows is what ProcessRestart holds, in one line.
const processRestartShows = "evt-1 and evt-2 credited, the process ended, and evt-1 repeated by a new process " +
	"on the same database file: the repeat gets evt-1's first receipt"

// processRestart is the replay exercise's ProcessRestart: evt-1 and evt-2
// credit account 1 through s's handler in this process; then a new
// process (the test binary started again) opens the same database file
// and repeats evt-1, and its answer must be evt-1's first receipt,
// duplicate with balance 500. It runs outside the lab's hooks: no
// interleaving or fault is its question, only what a new process knows.
func processRestart(c *Checker, s replay.Service) {
	const name = "ProcessRestart"
	if restarting() {
		answer := restartAnswer{}
		r, err := repeatInNewProcess(s, *restartFlag)
		answer.Receipt = r
		if err != nil {
			answer.Err = err.Error()
		}
		data, _ := json.Marshal(answer)
		fmt.Printf("\n%s%s\n", restartMarker, data)
		return
	}
	if c.Done() || c.Skips(name) {
		return
	}
	fail := func(format string, args ...any) { c.Failf(name, processRestartShows, format, args...) }
	path := filepath.Join(c.T.TempDir(), "ledger.db")
	first, err := creditInThisProcess(s, path)
	if err != nil {
		c.T.Errorf("ProcessRestart: preparing %s: %v", path, err)
		return
	}
	if want := (replay.Receipt{Outcome: lab.Applied, Balance: 500}); first != want {
		fail("Process(%v) = %+v, want %+v", evt1, first, want)
		return
	}
	answer, output, err := c.restartedAnswer(path)
	if err != nil {
		c.T.Errorf("ProcessRestart: the restarted process: %v\n%s", err, tail(output, 20))
		return
	}
	if want := (replay.Receipt{Outcome: lab.Duplicate, Balance: 500}); answer.Err != "" || answer.Receipt != want {
		got := fmt.Sprintf("%+v", answer.Receipt)
		if answer.Err != "" {
			got = "error: " + answer.Err
		}
		fail("after evt-2 and a restart of the process: Process(%v) = %s, want %+v", evt1, got, want)
	}
}

// creditInThisProcess creates s's schema in the file at path, with
// account 1 at 0, and delivers evt-1 and evt-2 through s's handler. It
// returns evt-1's receipt.
func creditInThisProcess(s replay.Service, path string) (replay.Receipt, error) {
	db, err := sql.Open("sqlite", s.DSN(path))
	if err != nil {
		return replay.Receipt{}, err
	}
	defer db.Close()
	if _, err := db.Exec(s.Schema); err != nil {
		return replay.Receipt{}, fmt.Errorf("the schema: %w", err)
	}
	if _, err := db.Exec(`INSERT INTO accounts (id, balance) VALUES (1, 0)`); err != nil {
		return replay.Receipt{}, fmt.Errorf("account 1: %w", err)
	}
	h := s.New(db)
	first, err := h.Process(context.Background(), evt1)
	if err != nil {
		return replay.Receipt{}, fmt.Errorf("Process(%v): %w", evt1, err)
	}
	if _, err := h.Process(context.Background(), evt2); err != nil {
		return replay.Receipt{}, fmt.Errorf("Process(%v): %w", evt2, err)
	}
	return first, nil
}

// repeatInNewProcess is the restarted process's part: a new handler of s
// on the database file at path, and evt-1's repeat.
func repeatInNewProcess(s replay.Service, path string) (replay.Receipt, error) {
	db, err := sql.Open("sqlite", s.DSN(path))
	if err != nil {
		return replay.Receipt{}, err
	}
	defer db.Close()
	return s.New(db).Process(context.Background(), evt1)
}

// restartedAnswer starts the test running c again in a process of its own
// as the restarted service on the database file at path, and returns the
// answer it printed and its output.
func (c *Checker) restartedAnswer(path string) (restartAnswer, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return restartAnswer{}, "", err
	}
	cmd := exec.Command(exe, append(c.childArgs(), "-exercise.restart="+path)...)
	out, runErr := cmd.CombinedOutput()
	for line := range strings.SplitSeq(string(out), "\n") {
		if data, ok := strings.CutPrefix(line, restartMarker); ok {
			var a restartAnswer
			if err := json.Unmarshal([]byte(data), &a); err != nil {
				return restartAnswer{}, string(out), fmt.Errorf("reading its answer %q: %w", data, err)
			}
			return a, string(out), nil
		}
	}
	if runErr == nil {
		runErr = errors.New("it ended without one")
	}
	return restartAnswer{}, string(out), fmt.Errorf("%s printed no answer: %w", strings.Join(cmd.Args, " "), runErr)
}
