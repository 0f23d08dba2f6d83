package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// Header modes of a server.
const (
	headersHonest = "honest" // testserver's own headers: RateLimit-Policy, RateLimit, X-RateLimit-*, Retry-After
	headersNone   = "none"   // the status alone
	headersLying  = "lying"  // the quota declared ten times over, and no Retry-After
)

// dialectTestserver is the dialect of testserver's own honest headers (no persona): RateLimit-Policy,
// RateLimit, X-RateLimit-*, Retry-After and a problem+json body on a 429. It is the default of
// -dialects, so that the sweep's cells are the ones it had before dialects.
const dialectTestserver = "testserver"

// dialectNames lists the dialects an honest server may answer in: testserver's own, then the
// personas of package testserver (testserver.WithDialect), in its order.
var dialectNames = append([]string{dialectTestserver}, testserver.Dialects()...)

// quietDialects are the personas that declare no quota: Stripe answers a 429 with its error body
// and no rate-limit header, and none the status alone. Their cells are judged as a server without
// headers is (goal429None), as issue 11 states its goals; every other dialect, testserver's own
// included, declares its quota and is held to goal429Honest.
var quietDialects = []string{"stripe", "none"}

// declaresQuota reports whether a server answering with headers in dialect declares its quota,
// which sets the throttled share a client is allowed (see quietDialects). Only honest headers
// declare one (a lying server's quota is false); an honest cell's empty dialect is testserver's own.
func declaresQuota(headers, dialect string) bool {
	return headers == headersHonest && !slices.Contains(quietDialects, dialect)
}

// Server kinds: the five algorithms of package algorithm, plus two built on them.
const (
	serverCountDenied = "count-denied" // a sliding window counter that counts refused requests too (testserver.Rule.CountDenied)
	serverChanging    = "changing"     // a token bucket whose limit halves and then doubles back mid-run
)

// serverKinds lists every server kind in the sweep's order.
var serverKinds = []string{
	algorithm.NameTokenBucket, algorithm.NameLeakyBucket, algorithm.NameFixedWindow, algorithm.NameSlidingLog,
	algorithm.NameSlidingWindow, serverCountDenied, serverChanging,
}

// limitSpec is one limit of the sweep: Limit requests per Window. Every server kind enforces it
// with a burst of the whole Limit: a window admits its quota at any time in it, and a bucket holds
// one window's quota and refills it over the window (5,000/h is a bucket of 5,000 refilling at
// 5,000 an hour, as issue 10 states it). One rule for every limit, so that no cell is tuned.
type limitSpec struct {
	Name   string
	Limit  int64
	Window time.Duration
}

// Burst is the server's burst: the whole Limit.
func (l limitSpec) Burst() int64 { return l.Limit }

// Rate is the long-run rate in requests per second.
func (l limitSpec) Rate() float64 { return float64(l.Limit) / l.Window.Seconds() }

// limits lists the sweep's limits. Every window is a whole number of seconds, as the RateLimit
// headers state windows (2,000/s is 2,000 per second, not 200 per 100 ms: honest headers could
// not say so).
var limits = []limitSpec{
	{"1/s", 1, time.Second},
	{"5/s", 5, time.Second},
	{"50/s", 50, time.Second},
	{"200/s", 200, time.Second},
	{"2000/s", 2000, time.Second},
	{"100/min", 100, time.Minute},
	{"5000/h", 5000, time.Hour},
}

// cell is one operating point of the sweep, run by every client kind.
type cell struct {
	Server  string
	Limit   limitSpec
	RTT     time.Duration
	Workers int // per client
	Headers string
	// Dialect is the dialect of honest headers: dialectTestserver or a testserver persona. It is
	// empty with the none and lying header modes, whose answers no persona shapes (see
	// grid.cells).
	Dialect string
	Clients int // independent clients sharing the key
	N       int // requests per client; 0: perClient's rule (the real-time check sets it to stay short)
}

func (c cell) String() string {
	return fmt.Sprintf("%s %s rtt=%v w=%d %s c=%d", c.Server, c.Limit.Name, c.RTT, c.Workers, headersLabel(c.Headers, c.Dialect), c.Clients)
}

// headersLabel names a header mode with its dialect: "honest" for testserver's own honest headers
// (as the sweep named them before dialects), "honest/github" for a persona's, "none" and "lying"
// alone.
func headersLabel(headers, dialect string) string {
	if dialect == "" || dialect == dialectTestserver {
		return headers
	}
	return headers + "/" + dialect
}

// workerBound reports whether the workers, not the server, bound the cell: workers/RTT, what
// they can send at most, is below twice the limit's rate. The goal is then the same ratio to the
// clairvoyant client's time, which the workers bound too.
func (c cell) workerBound() bool {
	return float64(c.Workers*c.Clients)/c.RTT.Seconds() < 2*c.Limit.Rate()
}

// Sizes. Each client sends at least minRequests and enough for the run to last judgedWindows of
// the server's windows at the limit (the clients share the limit: a tenth each when ten share
// it); with ten clients, warmupWindows more, which the warm 429 share leaves out. A run sends at
// most maxRequests in all: CPU time grows with requests, virtual time costs nothing, and without
// the cap 5,000/h would take 50,000 requests a run (at the cap it lasts 8 windows).
const (
	minRequests   = 300
	judgedWindows = 10
	warmupWindows = 10
	maxRequests   = 40_000
)

// manyClients is the sharing at and above which the goals of many independent clients apply.
const manyClients = 10

// perClient returns how many requests each client of c sends.
func (c cell) perClient() int {
	if c.N > 0 {
		return c.N
	}
	windows := float64(judgedWindows)
	if c.Clients >= manyClients {
		windows += warmupWindows
	}
	n := int(math.Ceil(windows * float64(c.Limit.Limit) / float64(c.Clients)))
	n = max(n, minRequests)
	return min(n, max(maxRequests/c.Clients, minRequests))
}

// warmup is how long after the start a 429 still counts as warm-up for many clients:
// warmupWindows windows, or half the run at the limit when the request cap leaves less than
// twice that (5,000/h: half of 8 hours).
func (c cell) warmup() time.Duration {
	w := time.Duration(warmupWindows) * c.Limit.Window
	nominal := time.Duration(float64(c.perClient()*c.Clients) / c.Limit.Rate() * float64(time.Second))
	return min(w, nominal/2)
}
