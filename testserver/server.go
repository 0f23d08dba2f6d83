package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/internal/ctxsleep"
)

// Server is a running rate-limited HTTP server, in the manner of httptest.Server: [New] starts it
// on a free loopback port, [Server.URL] is its base URL, and [Server.Close] stops it. Requests to
// /-/stats get the counters as JSON ([Stats]), /-/healthz gets 200 "ok"; every other request goes
// through the limiter and, when admitted, is answered as configured by [WithResponse] (or passed
// to the handler of [WithHandler]), with the faults of [WithFaults].
//
// A Server is safe for concurrent use. Close it when done (t.Cleanup(s.Close), or use [NewT]);
// after Close no goroutine of it is left.
type Server struct {
	cfg      *config
	limiter  *Limiter
	ln       net.Listener
	srv      *http.Server
	handler  http.Handler
	faults   *faultInjector
	arrivals *arrivalLog
	// idempotency honours Idempotency-Key in front of the answer (WithIdempotency); nil without.
	idempotency *Idempotency
	// answer answers an admitted request after the faults: the application, behind idempotency.
	answer http.Handler

	base   context.Context
	cancel context.CancelFunc
	done   chan struct{}
	active activeSet

	closeOnce sync.Once
	closeErr  error

	admitted, throttled, errs, resets, slowed atomic.Int64
}

// ServerStats are a Server's own counters, beyond the limiter's.
type ServerStats struct {
	// Requests counts requests that reached the limiter (not /-/ endpoints).
	Requests int64 `json:"requests"`
	// Admitted and Throttled split Requests by the limiter's decision.
	Admitted  int64 `json:"admitted"`
	Throttled int64 `json:"throttled"`
	// Errors counts injected error statuses; Resets injected connection resets; Slowed requests
	// given the injected latency.
	Errors int64 `json:"errors"`
	Resets int64 `json:"resets"`
	Slowed int64 `json:"slowed"`
	// Idempotency holds the counters of WithIdempotency; nil without it.
	Idempotency *IdempotencyStats `json:"idempotency,omitempty"`
}

// New starts a Server with the given options on [WithAddr] (default 127.0.0.1:0, a free port).
// Bad rules give a *[RuleError], bad options an *[OptionError], and a failing listen its error.
func New(opts ...Option) (*Server, error) {
	cfg := newConfig(opts)
	if err := cfg.serverErr(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, faults: newFaultInjector(cfg.faults), arrivals: newArrivalLog(cfg.arrivals), done: make(chan struct{})}
	userHook := cfg.hook
	cfg.hook = func(now time.Time, r *http.Request, res Result) {
		s.arrivals.add(now, r, &res)
		if res.Allowed {
			s.admitted.Add(1)
		} else {
			s.throttled.Add(1)
		}
		if userHook != nil {
			userHook(now, r, res)
		}
	}
	l, err := newLimiter(cfg.rules, cfg)
	if err != nil {
		return nil, err
	}
	s.limiter = l
	s.answer = http.HandlerFunc(s.serveApp)
	if cfg.idempotencyKeys >= 0 {
		s.idempotency, err = NewIdempotency(cfg.idempotencyKeys)
		if err != nil {
			_ = l.Close()
			return nil, err
		}
		s.answer = s.idempotency.Middleware(s.answer)
	}
	s.handler = s.buildHandler()

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	s.ln = ln
	s.base, s.cancel = context.WithCancel(context.Background())
	s.srv = &http.Server{
		Handler:           s.active.wrap(s.handler),
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.base },
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// TB is the part of testing.TB that [NewT] uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// NewT starts a Server like [New], fails the test at once if it cannot, and closes the server when
// the test ends (t.Cleanup).
func NewT(t TB, opts ...Option) *Server {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatalf("testserver.New: %v", err)
		return nil
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// URL returns the server's base URL, such as "http://127.0.0.1:34567".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Handler returns the server's handler (the /-/ endpoints and the rate-limited application) for
// use without the listener, for example with httptest.NewRecorder or in a testing/synctest
// bubble.
func (s *Server) Handler() http.Handler { return s.handler }

// Limiter returns the server's limiter, for example to change its rules with SetRules.
func (s *Server) Limiter() *Limiter { return s.limiter }

// Stats returns a snapshot of the limiter's and the server's counters.
func (s *Server) Stats() Stats {
	st := s.limiter.Stats()
	st.Server = &ServerStats{
		Requests:  s.admitted.Load() + s.throttled.Load(),
		Admitted:  s.admitted.Load(),
		Throttled: s.throttled.Load(),
		Errors:    s.errs.Load(),
		Resets:    s.resets.Load(),
		Slowed:    s.slowed.Load(),
	}
	if s.idempotency != nil {
		is := s.idempotency.Stats()
		st.Server.Idempotency = &is
	}
	return st
}

// Arrivals returns the last [WithArrivalLog] decided requests, oldest first.
func (s *Server) Arrivals() []Arrival { return s.arrivals.snapshot() }

// ResetArrivals forgets the remembered arrivals.
func (s *Server) ResetArrivals() { s.arrivals.reset() }

// Close stops the server at once: it closes the listener and every connection, ends waiting
// handlers (latency, shaping), waits for its goroutines and handlers to finish, and closes the
// limiter. It is idempotent; it returns the first call's error.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		// Connections first, so handlers cut short below cannot answer anyone.
		s.closeErr = s.srv.Close()
		s.cancel()
		s.finish()
	})
	return s.closeErr
}

// Shutdown stops the server gracefully: it stops accepting, waits for requests in progress to
// finish or ctx to end (then closes like Close), and closes the limiter. Calls after the first
// (and after Close) return the first call's result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() {
		err := s.srv.Shutdown(ctx)
		if err != nil {
			_ = s.srv.Close()
		}
		s.cancel()
		s.closeErr = err
		s.finish()
	})
	return s.closeErr
}

func (s *Server) finish() {
	<-s.done
	s.active.closeAndWait()
	if err := s.limiter.Close(); err != nil && s.closeErr == nil {
		s.closeErr = err
	}
	if errors.Is(s.closeErr, http.ErrServerClosed) {
		s.closeErr = nil
	}
}

// buildHandler assembles the /-/ endpoints and the rate-limited application.
func (s *Server) buildHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/-/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/-/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.Stats())
	})
	mux.Handle("/", s.limiter.Middleware(http.HandlerFunc(s.serveAdmitted)))
	return mux
}

// serveAdmitted answers an admitted request: faults first, then (behind WithIdempotency's
// Idempotency, when given) the WithHandler handler or the configured response.
func (s *Server) serveAdmitted(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f := s.faults.draw()
	if f.slow {
		s.slowed.Add(1)
		if err := ctxsleep.Sleep(ctx, s.cfg.faults.Latency); err != nil {
			writeUnavailable(w, "request ended during injected latency: "+err.Error())
			return
		}
	}
	if f.reset {
		s.resets.Add(1)
		resetConnection(w)
		return
	}
	if f.status != 0 {
		s.errs.Add(1)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(http.StatusText(f.status) + " (injected fault)\n"))
		return
	}
	s.answer.ServeHTTP(w, r)
}

// serveApp answers with the WithHandler handler or the configured response.
func (s *Server) serveApp(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if s.cfg.app != nil {
		s.cfg.app.ServeHTTP(w, r)
		return
	}
	resp := s.cfg.response
	if err := ctxsleep.Sleep(ctx, resp.Latency); err != nil {
		writeUnavailable(w, "request ended during response latency: "+err.Error())
		return
	}
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = append([]string(nil), v...)
	}
	ct := resp.ContentType
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(resp.Body))
}

// activeSet counts handlers in progress so Close can wait for them, and turns away requests that
// arrive after Close.
type activeSet struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{}
}

func (a *activeSet) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			panic(http.ErrAbortHandler)
		}
		a.n++
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			a.n--
			if a.n == 0 && a.idle != nil {
				close(a.idle)
				a.idle = nil
			}
			a.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

func (a *activeSet) closeAndWait() {
	a.mu.Lock()
	a.closed = true
	if a.n == 0 {
		a.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	a.idle = idle
	a.mu.Unlock()
	<-idle
}
