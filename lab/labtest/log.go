package labtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// A handler that logs does so the way production code does, through
// log/slog with the request's context: slog.ErrorContext(ctx, …). During a
// delivery the engine routes such a record into the transcript, on the
// line of the session that logged it, so that what the handler said sits
// beside what it did, and a test's output is not flooded on stderr. Records
// logged outside a delivery go to stderr as text.

// logKey is the context key of the transcript a delivery logs to.
type logKey struct{}

type logTarget struct {
	transcript *Transcript
	session    string
}

// withLog makes slog records logged with ctx part of t, on session's lines.
func withLog(ctx context.Context, t *Transcript, session string) context.Context {
	installLog.Do(func() {
		slog.SetDefault(slog.New(&transcriptHandler{fallback: slog.NewTextHandler(os.Stderr, nil)}))
	})
	return context.WithValue(ctx, logKey{}, logTarget{t, session})
}

var installLog sync.Once

// transcriptHandler is the slog.Handler the engine installs as the default.
type transcriptHandler struct {
	fallback slog.Handler
	attrs    []slog.Attr
}

func (h *transcriptHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo
}

func (h *transcriptHandler) Handle(ctx context.Context, r slog.Record) error {
	target, ok := ctx.Value(logKey{}).(logTarget)
	if !ok {
		return h.fallback.WithAttrs(h.attrs).Handle(ctx, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "log %s %s", r.Level, r.Message)
	write := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	target.transcript.Note(target.session, b.String(), "")
	return nil
}

func (h *transcriptHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &transcriptHandler{fallback: h.fallback, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

// WithGroup is not supported: a group's attributes are logged without it.
func (h *transcriptHandler) WithGroup(name string) slog.Handler { return h }
