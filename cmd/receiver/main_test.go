package main

import (
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRunPortBusy starts the receiver on a port already taken: the error
// says which flag picks another, and how to send to it then.
func TestRunPortBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = run("correct", ln.Addr().String(), filepath.Join(t.TempDir(), "demo.db"))
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "pick another with -addr") ||
		!strings.Contains(err.Error(), "-url") {
		t.Errorf("run(correct, %s), the port taken = %v, want address in use, the -addr that picks another and the provider's -url", ln.Addr(), err)
	}
}

// TestParseArgs: flags are honoured before and after the variant, the
// variant is correct unless named, -h is help, and a second variant or an
// unknown flag is refused in a line and the usage line.
func TestParseArgs(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		name, addr string
		err        string // "" for none, else what output must say
	}{
		{nil, "correct", "127.0.0.1:8080", ""},
		{[]string{"naive/checkthenact"}, "naive/checkthenact", "127.0.0.1:8080", ""},
		{[]string{"-addr", "127.0.0.1:8081", "naive/checkthenact"}, "naive/checkthenact", "127.0.0.1:8081", ""},
		{[]string{"naive/checkthenact", "-addr", "127.0.0.1:8081"}, "naive/checkthenact", "127.0.0.1:8081", ""},
		{[]string{"naive/checkthenact", "-addr=127.0.0.1:8081", "-db", "x.db"}, "naive/checkthenact", "127.0.0.1:8081", ""},
		{[]string{"naive/checkthenact", "correct"}, "", "", "receiver: one variant at a time, not 2: naive/checkthenact correct\n" + usageLine},
		{[]string{"naive/checkthenact", "-port", "1"}, "", "", "flag provided but not defined: -port\n" + usageLine},
		{[]string{"-h"}, "", "", "-addr address"},
	} {
		var out strings.Builder
		got, err := parseArgs(tt.args, &out)
		if tt.err != "" {
			if err == nil || !strings.Contains(out.String(), tt.err) {
				t.Errorf("parseArgs(%q) = %+v, %v, printing %q; want an error, printing %q", tt.args, got, err, out.String(), tt.err)
			}
			continue
		}
		if err != nil || got.name != tt.name || got.addr != tt.addr {
			t.Errorf("parseArgs(%q) = %+v, %v; want variant %s on %s", tt.args, got, err, tt.name, tt.addr)
		}
	}
	if _, err := parseArgs([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseArgs(-h) = %v, want flag.ErrHelp (help, exit 0)", err)
	}
}

// TestDocsNameTheDatabase: the live demo's page names the file the
// receiver keeps its database in, for a learner to delete it.
func TestDocsNameTheDatabase(t *testing.T) {
	doc, err := os.ReadFile("../../docs/http.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "`"+defaultDB+"`") {
		t.Errorf("strings.Contains(docs/http.md, \"`%s`\") = false, want true: name the receiver's database file", defaultDB)
	}
}
