package main

import (
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// startServer starts the embedded testserver on a free loopback port with the single global rule
// of cfg. The caller closes it.
func startServer(cfg serverConfig) (*testserver.Server, error) {
	opts := []testserver.Option{
		testserver.WithRules(cfg.rule()),
		testserver.WithHeaders(cfg.headers),
		testserver.WithStatus(cfg.status),
		testserver.WithArrivalLog(0),  // the batch reads counters, not arrivals
		testserver.WithIdempotency(0), // a POST sent again by -resume is applied once
	}
	if cfg.dialect != "" {
		opts = append(opts, testserver.WithDialect(cfg.dialect))
	}
	return testserver.New(opts...)
}

// serverReport is what the summary says about the embedded server: its limit and its own counts.
type serverReport struct {
	algorithm string
	limitRPS  float64
	// allowance is how many requests a fresh key admits at once (see initialAllowance).
	allowance int64
	requests  int64
	throttled int64
}

// headStart is how many requests count as free in the physical limit: the allowance, except for a
// sliding window counter, whose initial burst is borrowed from its next window (by the time t it
// admits at most R*t in all, less its phase in the first window: N/R is its physical limit).
func (r *serverReport) headStart() int64 {
	if r.algorithm == algorithm.NameSlidingWindow {
		return 0
	}
	return r.allowance
}

// report reads the server's counters after a run.
func report(cfg serverConfig, srv *testserver.Server) *serverReport {
	r := &serverReport{algorithm: cfg.algorithm, limitRPS: cfg.limitRPS(), allowance: cfg.initialAllowance()}
	if st := srv.Stats().Server; st != nil {
		r.requests, r.throttled = st.Requests, st.Throttled
	}
	return r
}
