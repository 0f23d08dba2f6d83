package main

import (
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// setup is the server side of one run: an algorithm, with or without rate-limit headers, at the
// command line's limit.
type setup struct {
	algorithm string
	headers   bool
	limit     int64
	window    time.Duration
	burst     int64 // as given with -burst; used by the bucket algorithms only
}

// setupFor returns the setup of one (algorithm, headers) pair under cfg.
func setupFor(cfg *config, alg string, headers bool) setup {
	return setup{algorithm: alg, headers: headers, limit: cfg.limit, window: cfg.window, burst: cfg.burst}
}

// bucket reports whether the algorithm takes a burst of its own (the buckets).
func (s setup) bucket() bool {
	return s.algorithm == algorithm.NameTokenBucket || s.algorithm == algorithm.NameLeakyBucket
}

// rule is the server's single rule: one global key, so every request of the run counts against
// the same limit.
func (s setup) rule() testserver.Rule {
	r := testserver.Rule{Algorithm: s.algorithm, Limit: s.limit, Window: s.window}
	if s.bucket() {
		r.Burst = s.burst
	}
	return r
}

// rate is the server's limit in requests per second.
func (s setup) rate() float64 { return float64(s.limit) / s.window.Seconds() }

// initialBurst is how many requests a fresh key admits at once: the burst of a bucket, the whole
// limit of a window algorithm (a window starts with its full quota).
func (s setup) initialBurst() int64 {
	switch {
	case s.bucket():
		return s.burst
	case s.algorithm == algorithm.NameSlidingWindow:
		return 0 // see physicalLimit
	}
	return s.limit
}

// physicalLimit is the least time in which a client gets n requests through the limit, for a run
// that started at start: (n - initial burst) / R. It is 0 when the initial burst admits them all. (A
// fixed window that happens to end soon after the start lets a client beat it by up to one window.)
// The sliding window counter admits at most R·t by absolute time t (its burst at a fresh start is
// borrowed from the next window), so its limit is n/R less the start's phase in its window.
func (s setup) physicalLimit(n int, start time.Time) time.Duration {
	rest := int64(n) - s.initialBurst()
	if rest <= 0 {
		return 0
	}
	d := time.Duration(float64(rest) / s.rate() * float64(time.Second))
	if s.algorithm == algorithm.NameSlidingWindow && s.window > 0 {
		d -= time.Duration(start.UnixNano() % int64(s.window))
	}
	return max(d, 0)
}

// start starts a fresh testserver for the setup on a free loopback port; the caller closes it.
func (s setup) start() (*testserver.Server, error) {
	return testserver.New(
		testserver.WithRules(s.rule()),
		testserver.WithHeaders(s.headers),
		testserver.WithArrivalLog(0), // the benchmark reads counters, not arrivals
		testserver.WithStatsKeys(0),
	)
}

// serverCounts reads the server's own counts: requests that reached the limiter and those it
// denied.
func serverCounts(srv *testserver.Server) (requests, denied int64) {
	if st := srv.Stats().Server; st != nil {
		return st.Requests, st.Throttled
	}
	return 0, 0
}
