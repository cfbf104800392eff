package labtest

import (
	"errors"
	"strings"
	"testing"
)

func TestTranscriptRendering(t *testing.T) {
	var tr Transcript
	tr.Note("A", "deliver provider-a/evt\x00-1\x1b[31m", "")
	tr.Step(&stmt{Session: "A", N: 1, Op: OpBegin, SQL: "BEGIN IMMEDIATE"}, &stmtResult{Rows: -1})
	tr.Step(&stmt{Session: "A", N: 2, Op: OpUpdate, SQL: "UPDATE accounts SET balance = 1"},
		&stmtResult{Rows: -1, NotRun: true, Err: errors.New("injected fault before statement 2")})
	tr.Step(&stmt{Session: "B", N: 3, Op: OpUpdate, SQL: "UPDATE accounts SET balance = 2"},
		&stmtResult{Rows: -1, Err: errors.New("disk I/O error")})
	got := tr.String()
	for _, want := range []string{
		`A: deliver provider-a/evt\x00-1\x1b[31m` + "\n",
		"A1: BEGIN IMMEDIATE",
		"A2: UPDATE accounts SET balance = 1  -> not run: injected fault before statement 2\n",
		"B3: UPDATE accounts SET balance = 2  -> error: disk I/O error\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Transcript.String() = %q, want it to contain %q", got, want)
		}
	}
	if strings.ContainsRune(got, 0) || strings.ContainsRune(got, 0x1b) {
		t.Errorf("Transcript.String() = %q, want no raw control bytes", got)
	}
}
