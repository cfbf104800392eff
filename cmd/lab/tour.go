package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"idemlab/lab/report"
	"idemlab/workshop"
)

// cmdTour prints the guided tour (package tour), every step or the one
// args names. A step's answer is shown only when asked: with -answer, or,
// on a terminal (interactive), after the room has had its go and Enter is
// pressed. On a terminal the whole tour waits for Enter between steps.
func cmdTour(stdin io.Reader, interactive bool, stdout io.Writer, args []string, answer bool) error {
	steps := workshop.Tour
	first := 0
	if len(args) == 1 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > len(steps) {
			return usagef("the tour has steps 1 to %d, not %q: go run ./cmd/lab tour 1", len(steps), args[0])
		}
		first, steps = n-1, steps[n-1:n]
	}
	in := bufio.NewScanner(stdin)
	// wait prints prompt and waits for a line; false if the reader has
	// ended or asked to stop.
	wait := func(prompt string) bool {
		fmt.Fprint(stdout, prompt)
		if !in.Scan() {
			fmt.Fprintln(stdout)
			return false
		}
		return strings.TrimSpace(strings.ToLower(in.Text())) != "q"
	}
	for i, s := range steps {
		n := first + i + 1
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprint(stdout, renderStep(n, s))
		switch {
		case answer:
			fmt.Fprint(stdout, report.Wrap("answer: "+s.Answer, 8))
		case interactive:
			if !wait("[Enter: the answer, q: stop] ") {
				return nil
			}
			fmt.Fprint(stdout, report.Wrap("answer: "+s.Answer, 8))
			if i < len(steps)-1 && !wait(fmt.Sprintf("[Enter: step %d, q: stop] ", n+1)) {
				return nil
			}
		default:
			fmt.Fprintf(stdout, "answer: go run ./cmd/lab tour %d -answer (once the room has had its go)\n", n)
		}
	}
	if len(steps) == 1 && first+1 < len(workshop.Tour) {
		fmt.Fprintf(stdout, "\nnext: go run ./cmd/lab tour %d\n", first+2)
	}
	return nil
}

// renderStep is step n as the terminal shows it, without its answer: one
// thing to run, the same on the page, what to look at and what to ask.
func renderStep(n int, s workshop.TourStep) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d of %d: %s\n", n, len(workshop.Tour), s.Title)
	fmt.Fprintf(&b, "run:    %s\n", s.Command())
	b.WriteString(report.Wrap(fmt.Sprintf("click:  http://%s%s (the page: go run ./cmd/lab web)", webAddr, s.Click), 8))
	b.WriteString(report.Wrap("look:   "+s.Look, 8))
	b.WriteString(report.Wrap("ask:    "+s.Question, 8))
	return b.String()
}
