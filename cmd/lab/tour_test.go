package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/workshop"
)

// TestTourSteps holds every step of the tour to what it says: it has a
// command, a page to click, what to look at, a question and an answer;
// what it says to look at is quoted in Look, and is in what the command
// prints when it is run (the real command: it runs go test ./scenarios);
// and its page answers on the workshop.
func TestTourSteps(t *testing.T) {
	if n := len(workshop.Tour); n < 6 || n > 8 {
		t.Errorf("len(workshop.Tour) = %d, want six to eight steps", n)
	}
	rep := goldenReport(t, backends[0].golden)
	st, err := workshop.ReadStepper(filepath.Join("..", "..", "workshop", "testdata", "race.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := workshop.Handler(&workshop.Data{Tabs: workshop.Finished(rep), Stepper: st})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range workshop.Tour {
		if s.Title == "" || len(s.Run) == 0 || s.Click == "" || s.Look == "" || len(s.Expect) == 0 || s.Question == "" || s.Answer == "" {
			t.Errorf("workshop.Tour[%d] = %+v, want a title, a command, a page, what to look at, a question and an answer", i, s)
			continue
		}
		for _, e := range s.Expect {
			if !strings.Contains(s.Look, `"`+e+`"`) {
				t.Errorf("step %d (%s): Look = %q, want it to quote %q, which the test looks for", i+1, s.Title, s.Look, e)
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", s.Click, nil))
		if w.Code != http.StatusOK {
			t.Errorf("step %d (%s): GET %s = %d %.200q, want 200", i+1, s.Title, s.Click, w.Code, w.Body.String())
		}
	}
	if !labtest.FullSuite() {
		t.Skipf("the quick suite: the steps' commands run go test ./scenarios, which %s=1 runs", labtest.FullEnv)
	}
	for i, s := range workshop.Tour {
		var stdout, stderr bytes.Buffer
		if status := run(s.Run, &stdout, &stderr); status != exitOK {
			t.Errorf("step %d: %s = exit %d, want 0:\n%s", i+1, s.Command(), status, stderr.String())
			continue
		}
		out := unwrapped(stdout.String())
		for _, e := range s.Expect {
			if !strings.Contains(out, unwrapped(e)) {
				t.Errorf("step %d: %s prints no %q, which the step says to look at:\n%s", i+1, s.Command(), e, stdout.String())
			}
		}
	}
}

// TestTourReveal: the answer is shown only when asked, with -answer or
// after Enter on a terminal; every line fits report.Width.
func TestTourReveal(t *testing.T) {
	answers := func(out string) (n int) {
		for _, s := range workshop.Tour {
			if strings.Contains(unwrapped(out), unwrapped(s.Answer)) {
				n++
			}
		}
		return n
	}
	tell := func(stdin string, interactive bool, args []string, answer bool) string {
		t.Helper()
		var out bytes.Buffer
		if err := cmdTour(strings.NewReader(stdin), interactive, &out, args, answer); err != nil {
			t.Fatalf("cmdTour(%q, %v) error = %v", args, answer, err)
		}
		// On a terminal the reader's Enter ends a prompt's line; here the
		// input is not echoed, so what follows a prompt starts a line.
		if line, n := report.WidestLine(strings.ReplaceAll(out.String(), "stop] ", "stop]\n")); n > report.Width {
			t.Errorf("cmdTour(%q, %v) has a line of %d columns, want at most %d: %q", args, answer, n, report.Width, line)
		}
		return out.String()
	}
	all := tell("", false, nil, false)
	if n := answers(all); n != 0 || strings.Count(all, "\nrun:    go run ./cmd/lab ") != len(workshop.Tour) {
		t.Errorf("cmdTour() shows %d answers, want every step and none:\n%s", n, all)
	}
	if !strings.Contains(all, "answer: go run ./cmd/lab tour 3 -answer") {
		t.Errorf("cmdTour() does not say how to see step 3's answer:\n%s", all)
	}
	three := tell("", false, []string{"3"}, false)
	if !strings.HasPrefix(three, "Step 3 of ") || answers(three) != 0 || !strings.Contains(three, "next: go run ./cmd/lab tour 4") {
		t.Errorf("cmdTour(3) = %q, want step 3 alone, without its answer, and the next step", three)
	}
	if got := tell("", false, []string{"3"}, true); answers(got) != 1 || !strings.Contains(unwrapped(got), unwrapped(workshop.Tour[2].Answer)) {
		t.Errorf("cmdTour(3, -answer) = %q, want step 3's answer", got)
	}
	if got := tell("\n", true, []string{"3"}, false); answers(got) != 1 || !strings.Contains(got, "[Enter: the answer, q: stop] ") {
		t.Errorf("cmdTour(3) on a terminal, Enter = %q, want the prompt, then step 3's answer", got)
	}
	if got := tell("\n\nq\n", true, nil, false); answers(got) != 1 || !strings.Contains(got, "Step 2 of") || strings.Contains(got, "Step 3 of") {
		t.Errorf("cmdTour() on a terminal, Enter, Enter, q = %q, want step 1 with its answer, step 2 without, and no more", got)
	}
	if got := tell("q\n", true, []string{"1"}, false); answers(got) != 0 {
		t.Errorf("cmdTour(1) on a terminal, q = %q, want no answer", got)
	}
}
