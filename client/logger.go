package client

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// slogObserver logs the stack's events: waits and attempts at Debug, retries at Info, giving up at
// Warn. It is safe for concurrent use (slog.Logger is).
type slogObserver struct{ l *slog.Logger }

func (s slogObserver) log(req *http.Request, level slog.Level, msg string, attrs ...slog.Attr) {
	ctx := req.Context()
	if !s.l.Enabled(ctx, level) {
		return
	}
	attrs = append(attrs, slog.String("method", req.Method), slog.String("url", req.URL.Redacted()))
	s.l.LogAttrs(ctx, level, msg, attrs...)
}

func (s slogObserver) Queued(req *http.Request, waited time.Duration) {
	s.log(req, slog.LevelDebug, "steady: waited in queue", slog.Duration("waited", waited))
}

func (s slogObserver) Throttled(req *http.Request, key string, waited time.Duration) {
	s.log(req, slog.LevelDebug, "steady: throttled", slog.String("key", key), slog.Duration("waited", waited))
}

func (s slogObserver) Attempt(req *http.Request, attempt int) {
	s.log(req, slog.LevelDebug, "steady: attempt", slog.Int("attempt", attempt))
}

func (s slogObserver) Retry(req *http.Request, attempt int, reason retry.Reason, wait time.Duration) {
	s.log(req, slog.LevelInfo, "steady: retrying", slog.Int("attempt", attempt),
		slog.String("reason", reason.String()), slog.Duration("wait", wait))
}

func (s slogObserver) GaveUp(req *http.Request, attempts int, reason retry.Reason, cause error) {
	attrs := []slog.Attr{slog.Int("attempts", attempts), slog.String("reason", reason.String())}
	if cause != nil {
		attrs = append(attrs, slog.String("cause", cause.Error()))
	}
	s.log(req, slog.LevelWarn, "steady: gave up", attrs...)
}

var _ = context.Background // the logger honours the request's context (slog handlers may read it)
