package fleet

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/mariadb"
	"idemlab/postgres"
	"idemlab/webhook"
)

// The roles a process of the fleet plays.
const (
	RoleInline   = "inline"   // a receiver that applies the credit before it answers
	RoleEnqueuer = "enqueuer" // a receiver that accepts the event and answers
	RoleWorker   = "worker"   // claims jobs and applies their credits
)

// Source is the one integration the fleet's receivers trust, at
// /webhooks/<Source>.
const Source = "provider-a"

// Secret signs and verifies the fleet's deliveries. It is a test secret,
// published on purpose.
const Secret = "whsec_ZmxlZXQgdGVzdCBzZWNyZXQsIG5vdCBmb3IgdXNlIQ=="

// PoolSize is the most connections one process of the fleet opens.
const PoolSize = 8

// ReadyPrefix starts the one line a process writes to its output once it
// serves: "ready" and, for a receiver, the address it listens on.
const ReadyPrefix = "ready"

// Child is the body of one process of the fleet, playing role on the
// database at dbURL (a postgres:// URL whose tables exist; for
// RoleInlineMariaDB a go-sql-driver/mysql DSN), every transaction of its
// pool at isolation level. A receiver
// listens on a loopback port of its own choosing and writes
// "ready <address>" to out once it serves; a worker writes "ready" once
// its pool has reached the server. Both run until in reaches its end —
// the parent closes the pipe, or dies — when a receiver stops and a
// worker finishes every job left and stops. SIGKILL, of course, stops
// either at once.
//
// A receiver given dieAfter, an event id, kills itself with SIGKILL once
// it has applied that event and before it answers (see dyingAfterCommit):
// the one crash the fleet's tests place exactly, not at a request count.
func Child(role, dbURL string, level lab.Isolation, dieAfter string, in io.Reader, out io.Writer) error {
	var db *sql.DB
	var aborts *Aborts
	var err error
	levelQuery, want := `SHOW default_transaction_isolation`, string(level)
	if role == RoleInlineMariaDB {
		db, aborts, err = openMariaDB(dbURL, level)
		levelQuery, want = `SELECT @@tx_isolation`, mariadb.Level(level)
	} else {
		db, err = sql.Open("pgx", postgres.DSN(dbURL, level))
	}
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(PoolSize)
	db.SetMaxIdleConns(PoolSize)
	ctx := context.Background()
	var got string
	if err := db.QueryRowContext(ctx, levelQuery).Scan(&got); err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("the server runs transactions at %s, want %s", got, want)
	}
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, bufio.NewReader(in))
		close(eof)
	}()

	if role == RoleWorker {
		fmt.Fprintln(out, ReadyPrefix)
		return Worker{DB: db}.Run(ctx, eof)
	}
	var proc lab.Processor
	switch role {
	case RoleInline:
		proc = postgres.Retry(correct.New(db))
	case RoleEnqueuer:
		proc = postgres.Retry(Enqueuer{DB: db})
	case RoleInlineMariaDB:
		proc = mariadb.Retry(correct.NewMariaDB(db))
	default:
		return fmt.Errorf("no role %q", role)
	}
	if dieAfter != "" {
		proc = dyingAfterCommit{proc: proc, eventID: dieAfter}
	}
	h, err := Handler(db, proc)
	if err != nil {
		return err
	}
	if aborts != nil {
		h = withAborts(h, aborts)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-eof
		shut, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	fmt.Fprintln(out, ReadyPrefix, ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler serves proc behind webhook.Receiver at POST /webhooks/<Source>,
// verifying Secret, and answers GET /ready with 204 once db answers.
func Handler(db *sql.DB, proc lab.Processor) (http.Handler, error) {
	key, err := webhook.ParseSecret(Secret)
	if err != nil {
		return nil, err
	}
	rc := webhook.NewReceiver(proc, &webhook.Verifier{
		Integrations: []webhook.Integration{{Source: Source, Secrets: []webhook.Secret{key}}}})
	// Exact paths, no http.ServeMux: a webhook endpoint never answers 3xx.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/webhooks/" + Source:
			rc.ServeHTTP(w, r)
		case "/ready":
			if err := db.PingContext(r.Context()); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}), nil
}

// dyingAfterCommit is proc, except that once proc has applied (or, for an
// enqueuer, accepted) the event eventID — its transaction committed, since
// Process returns only after COMMIT did — the process kills itself with
// SIGKILL, before webhook.Receiver writes the answer. The event is then in
// the database and its sender has no answer: the crash between COMMIT and
// the answer that claim C13 is about, set off by what the process
// did rather than by a timing. The handler's code is not touched.
type dyingAfterCommit struct {
	proc    lab.Processor
	eventID string
}

// Process implements lab.Processor.
func (d dyingAfterCommit) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	o, err := d.proc.Process(ctx, e)
	if err == nil && o == lab.Applied && e.EventID == d.eventID {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL cannot be caught: the process ends here
	}
	return o, err
}

// withAborts is h, and GET /aborts answered by a.
func withAborts(h http.Handler, a *Aborts) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/aborts" {
			a.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}
