package main

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/steadyhttp/steady/testserver"
)

// okHandler answers admitted requests when there is no upstream.
func okHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok\n")
}

// newHandler assembles the server's handler: /-/stats, /-/healthz and, when metrics is not nil,
// /metrics (Prometheus; any method; never rate limited nor proxied), and every other path through
// the limiter to app.
func newHandler(l *testserver.Limiter, app http.Handler, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/-/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/-/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(l.Stats())
	})
	if metrics != nil {
		mux.Handle("/metrics", metrics)
	}
	mux.Handle("/", l.Middleware(app))
	return mux
}
