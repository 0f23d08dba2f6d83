package main

import (
	"github.com/steadyhttp/steady/testserver"
)

// startServer starts the embedded testserver on a free loopback port with the single global rule
// of cfg. The caller closes it.
func startServer(cfg serverConfig) (*testserver.Server, error) {
	return testserver.New(
		testserver.WithRules(cfg.rule()),
		testserver.WithHeaders(cfg.headers),
		testserver.WithStatus(cfg.status),
		testserver.WithArrivalLog(0), // the batch reads counters, not arrivals
	)
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

// report reads the server's counters after a run.
func report(cfg serverConfig, srv *testserver.Server) *serverReport {
	r := &serverReport{algorithm: cfg.algorithm, limitRPS: cfg.limitRPS(), allowance: cfg.initialAllowance()}
	if st := srv.Stats().Server; st != nil {
		r.requests, r.throttled = st.Requests, st.Throttled
	}
	return r
}
