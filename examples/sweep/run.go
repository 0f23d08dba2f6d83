package main

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/internal/pipenet"
	"github.com/steadyhttp/steady/throttle"
)

// outcome is one run of one client kind on one cell with one seed.
type outcome struct {
	elapsed                  time.Duration
	attempts, denied         int64
	warmAttempts, warmDenied int64
	lost                     int64
	// admitted holds each client's admissions when the first client sent its last request.
	admitted []int64
}

func (o outcome) throttledShare() float64 { return ratio(o.denied, o.attempts) }
func (o outcome) warmShare() float64      { return ratio(o.warmDenied, o.warmAttempts) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// nominal is the least time c's requests can take by the limit's rate or by the workers' round
// trips, whichever binds (a rough figure, for the changing server's schedule and the runs' bound).
func nominal(c cell) time.Duration {
	total := float64(c.perClient() * c.Clients)
	byRate := total / c.Limit.Rate()
	byWorkers := total * c.RTT.Seconds() / float64(c.Workers*c.Clients)
	return time.Duration(max(byRate, byWorkers) * float64(time.Second))
}

// runBound is how long a run may last before its unfinished requests count as lost: fifty times
// the nominal time plus two windows (what a client that waits out whole windows needs), and the
// longest single wait a client is allowed (its max wait). A client slower than that has failed the
// cell many times over; the bound only stops it from burning CPU time.
func runBound(c cell) time.Duration {
	return 50*nominal(c) + 2*c.Limit.Window + maxWaitFor(c.Limit)
}

// phaseOf is where in the server's window seed starts the run.
func phaseOf(c cell, seed uint64) time.Duration {
	rng := rand.New(rand.NewPCG(seed, uint64(c.Limit.Window)))
	return time.Duration(rng.Int64N(int64(c.Limit.Window)))
}

// simEpoch is the wall time at which the runs' windows start, before their phase. A bubble's clock
// starts at midnight, 1 January 2000 UTC: Unix time 946,684,800, below the 1e9 above which a
// numeric reset is read as a Unix time rather than as seconds from now (package dialects, as the
// wild sends both), so a persona's Unix-time resets (GitHub's, X-RateLimit's) would read as 30
// years. The runs therefore start at midnight, 1 January 2026, a whole number of days later: still
// a boundary of every window (the longest, the changing server's 2 h, divides a day), and a time
// of the era real APIs answer in.
var simEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// runOnce runs client kind on cell c with seed in a synctest bubble of t (see simulate).
func runOnce(t *testing.T, c cell, kind string, seed uint64) outcome {
	var out outcome
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(simEpoch) + phaseOf(c, seed))
		var err error
		if out, err = simulate(c, kind, pipeNet{pipenet.New()}); err != nil {
			t.Fatal(err)
		}
	})
	return out
}

// network is where a run's server listens and its clients dial.
type network interface {
	listener() net.Listener
	dial(ctx context.Context, network, addr string) (net.Conn, error)
}

// pipeNet is the in-memory network of virtual time.
type pipeNet struct{ l *pipenet.Listener }

func (p pipeNet) listener() net.Listener { return p.l }
func (p pipeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return p.l.DialContext(ctx, network, addr)
}

// simulate runs client kind on cell c from now on: c.Clients independent clients of kind, each
// with c.Workers workers sending c.perClient() GETs through its own connections and the wire,
// against one server on nw. The caller starts it at the window phase it wants.
func simulate(c cell, kind string, nw network) (outcome, error) {
	var out outcome
	start := time.Now()
	rules, offsets, err := rulesFor(c.Server, c.Limit, nominal(c))
	if err != nil {
		return out, err
	}
	srv, err := newSimServer(c.Headers, c.Dialect, rules, offsets, start, c.Clients, c.warmup())
	if err != nil {
		return out, err
	}
	defer srv.close()
	var shared throttle.Limiter
	if kind == clientPhysical {
		if shared, err = newClairvoyant(rules, offsets, start, c.RTT/2); err != nil {
			return out, err
		}
	}
	ln := nw.listener()
	hs := &http.Server{Handler: srv}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()

	ctx, cancel := context.WithTimeout(context.Background(), runBound(c))
	defer cancel()
	n := c.perClient()
	var lost atomic.Int64
	var wg sync.WaitGroup
	var transports []*http.Transport
	defer func() {
		for _, tr := range transports {
			tr.CloseIdleConnections()
		}
	}()
	for i := range c.Clients {
		tr := &http.Transport{DialContext: nw.dial, MaxIdleConnsPerHost: c.Workers, MaxIdleConns: c.Workers}
		transports = append(transports, tr)
		send, err := newSender(kind, c, &wire{next: tr, leg: c.RTT / 2}, shared)
		if err != nil {
			cancel()
			wg.Wait()
			return out, err
		}
		var next, done atomic.Int64
		id := strconv.Itoa(i)
		for range min(c.Workers, n) {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					if !sendOne(ctx, send, id) {
						lost.Add(1)
					}
					if done.Add(1) == int64(n) {
						srv.clientDone()
					}
				}
			})
		}
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	out.lost = lost.Load()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	out.attempts, out.denied = srv.attempts, srv.denied
	out.warmAttempts, out.warmDenied = srv.warmAttempts, srv.warmDenied
	out.admitted = srv.admittedAtFirstDone
	return out, nil
}

// sendOne sends one GET as client id and reports whether it succeeded (a 200 in the end).
func sendOne(ctx context.Context, send sender, id string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.sweep/items", nil)
	if err != nil {
		return false
	}
	req.Header.Set(clientHeader, id)
	resp, err := send(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
