package testserver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"
)

// Response is how a [Server] answers admitted requests. The zero value answers 200 with an empty
// body at once.
type Response struct {
	// Status is the status code; 0 means 200. 200 to 599.
	Status int
	// Body is the response body.
	Body string
	// ContentType is the Content-Type header; "" means "text/plain; charset=utf-8".
	ContentType string
	// Header holds extra response headers (copied into every admitted response).
	Header http.Header
	// Latency is how long the server waits before answering (ends early when the request's
	// context ends or the server closes). Not negative.
	Latency time.Duration
}

func (r Response) validate() error {
	if r.Status != 0 && (r.Status < 200 || r.Status > 599) {
		return fmt.Errorf("%w: status %d must be between 200 and 599", ErrInvalidOption, r.Status)
	}
	if r.Latency < 0 {
		return fmt.Errorf("%w: latency %v must not be negative", ErrInvalidOption, r.Latency)
	}
	return nil
}

// Faults makes a [Server] misbehave on a fraction of admitted requests, independently drawn per
// request from a pseudo-random sequence seeded by Seed (the same seed and arrival order give the
// same faults). Throttled requests are never faulted. The zero value injects nothing.
type Faults struct {
	// Latency is added before answering to the fraction LatencyRate of admitted requests.
	Latency time.Duration
	// LatencyRate is the fraction (0 to 1) of admitted requests that get Latency.
	LatencyRate float64
	// ErrorRate is the fraction (0 to 1) of admitted requests answered with an error status
	// instead of the configured Response.
	ErrorRate float64
	// ErrorStatuses are the error statuses, picked uniformly; default 500, 502 and 503.
	ErrorStatuses []int
	// ResetRate is the fraction (0 to 1) of admitted requests whose connection is reset (TCP
	// RST, by hijacking the connection and closing it with SO_LINGER 0) without any response.
	ResetRate float64
	// Seed seeds the draws.
	Seed uint64
}

func (f Faults) validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"latency rate", f.LatencyRate}, {"error rate", f.ErrorRate}, {"reset rate", f.ResetRate}} {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return fmt.Errorf("%w: %s %v must be between 0 and 1", ErrInvalidOption, r.name, r.v)
		}
	}
	if f.Latency < 0 {
		return fmt.Errorf("%w: latency %v must not be negative", ErrInvalidOption, f.Latency)
	}
	for _, s := range f.ErrorStatuses {
		if s < 400 || s > 599 {
			return fmt.Errorf("%w: error status %d must be between 400 and 599", ErrInvalidOption, s)
		}
	}
	return nil
}

// faultDraw is the faults one request gets.
type faultDraw struct {
	slow   bool
	reset  bool
	status int
}

// faultInjector draws faults; safe for concurrent use.
type faultInjector struct {
	f        Faults
	statuses []int
	mu       sync.Mutex
	rng      *rand.Rand
}

func newFaultInjector(f Faults) *faultInjector {
	statuses := f.ErrorStatuses
	if len(statuses) == 0 {
		statuses = []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}
	}
	return &faultInjector{f: f, statuses: statuses, rng: rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))}
}

// draw draws every fault in a fixed order, so the sequence depends only on the seed.
func (fi *faultInjector) draw() faultDraw {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	slow := fi.rng.Float64() < fi.f.LatencyRate
	reset := fi.rng.Float64() < fi.f.ResetRate
	isErr := fi.rng.Float64() < fi.f.ErrorRate
	pick := fi.statuses[fi.rng.IntN(len(fi.statuses))]
	d := faultDraw{slow: slow && fi.f.Latency > 0, reset: reset}
	if isErr {
		d.status = pick
	}
	return d
}

// resetConnection closes the request's connection abruptly (RST where the OS allows) without
// answering. When the ResponseWriter cannot be hijacked (HTTP/2, recorders) it aborts the handler
// with http.ErrAbortHandler, net/http's documented way to cut a response short.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		// net/http recognises the abort only by identity, so no wrapping here.
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
