package throttle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// This file is a small deterministic simulation of clients learning a server's limit, run in
// virtual time (testing/synctest): a server in-process that decides with the real testserver
// algorithms (algorithm.New, Decide/Commit at the virtual now) and writes the real headers
// (ratelimitheader.Write), behind a network with a round-trip time and jitter; clients made of the
// real Throttle and Transport with Adaptive limiters, and workers that retry throttled requests
// through them (every attempt is paced, as under the retry layer), after the retry layer's
// backoff.

// simServer is a rate-limited server reached over a simulated network. It is safe for concurrent
// use.
type simServer struct {
	headers bool
	status  int               // status of a throttled response
	rtt     time.Duration     // round-trip time, split evenly between the two ways
	jitter  time.Duration     // each way is late by up to jitter (uniform, seeded)
	lie     func(http.Header) // when set, rewrites the headers of every response

	mu       sync.Mutex
	rng      *rand.Rand
	algs     []simAlg // the algorithm in force from each offset on
	start    time.Time
	st       algorithm.State
	admitted int
	denied   int
}

// simAlg is an algorithm in force from offset at (since the server's start) on.
type simAlg struct {
	at  time.Duration
	alg algorithm.Algorithm
}

func newSimServer(t testing.TB, name string, limit int64, window time.Duration, burst int64, headers bool) *simServer {
	t.Helper()
	alg, err := algorithm.New(name, algorithm.Config{Limit: limit, Window: window, Burst: burst})
	if err != nil {
		t.Fatal(err)
	}
	return &simServer{
		headers: headers,
		status:  http.StatusTooManyRequests,
		rtt:     time.Millisecond,
		jitter:  500 * time.Microsecond,
		rng:     rand.New(rand.NewPCG(1, 2)),
		algs:    []simAlg{{0, alg}},
		start:   time.Now(),
	}
}

// changeLimit makes the server enforce limit (same algorithm and window, the burst scaled in
// proportion) from offset at on.
func (s *simServer) changeLimit(t testing.TB, at time.Duration, limit int64) {
	t.Helper()
	a, err := algorithm.Scale(s.algs[0].alg, limit)
	if err != nil {
		t.Fatal(err)
	}
	s.algs = append(s.algs, simAlg{at, a})
}

func (s *simServer) delay() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.rtt / 2
	if s.jitter > 0 {
		d += time.Duration(s.rng.Int64N(int64(s.jitter)))
	}
	return d
}

func (s *simServer) RoundTrip(req *http.Request) (*http.Response, error) {
	time.Sleep(s.delay())
	resp := s.decide()
	time.Sleep(s.delay())
	return resp, nil
}

func (s *simServer) decide() *http.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	alg := s.algs[0].alg
	for _, a := range s.algs {
		if now.Sub(s.start) >= a.at {
			alg = a.alg
		}
	}
	d := alg.Decide(&s.st, now, 1)
	h := http.Header{}
	status := http.StatusOK
	if d.Allowed {
		alg.Commit(&s.st, now, 1)
		s.admitted++
	} else {
		s.denied++
		status = s.status
	}
	if s.headers {
		ratelimitheader.Write(h, ratelimitheader.Fields{
			Limit: d.Limit, Window: alg.Window(), Remaining: d.Remaining, Reset: d.ResetAfter, RetryAfter: d.RetryAfter,
		})
		if s.lie != nil {
			s.lie(h)
		}
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody}
}

// simClient is one client process: a Throttle with Adaptive limiters, and its counters.
type simClient struct {
	tr        http.RoundTripper
	mu        sync.Mutex
	limiters  []*Adaptive
	attempts  atomic.Int64
	throttled atomic.Int64
	done      atomic.Int64
	lastDone  atomic.Int64 // virtual time of the last success, in ns since the run's start
	// perSecond counts successes per second of the run, when recording.
	perSecond []atomic.Int64
	// noBackoff makes throttled requests retry at once (through the throttle) instead of backing
	// off as a retry layer does.
	noBackoff bool
	rng       *rand.Rand // guarded by mu
}

func newSimClient(t testing.TB, s *simServer, seconds int, opts ...AdaptiveOption) *simClient {
	t.Helper()
	return newSimClientWith(t, s, seconds, AdaptiveFactory(opts...))
}

// newSimClientWith is newSimClient with any limiter factory.
func newSimClientWith(t testing.TB, s *simServer, seconds int, f func(string) (Limiter, error)) *simClient {
	t.Helper()
	c := &simClient{perSecond: make([]atomic.Int64, seconds+1)}
	th, err := New(WithLimiter(func(key string) (Limiter, error) {
		l, err := f(key)
		if a, ok := l.(*Adaptive); ok {
			c.mu.Lock()
			c.limiters = append(c.limiters, a)
			c.mu.Unlock()
		}
		return l, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	c.tr = NewTransport(s, th)
	return c
}

func (c *simClient) adaptive() *Adaptive {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.limiters) == 0 {
		return nil
	}
	return c.limiters[0]
}

// do sends one logical request, retrying throttled attempts (each through the throttle), until it
// succeeds or the context ends.
func (c *simClient) do(ctx context.Context, start time.Time) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.sim/item", nil)
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		resp, err := c.tr.RoundTrip(req)
		if err != nil {
			return err
		}
		c.attempts.Add(1)
		if resp.StatusCode == http.StatusOK {
			el := time.Since(start)
			c.done.Add(1)
			c.lastDone.Store(int64(el))
			if s := int(el / time.Second); s < len(c.perSecond) {
				c.perSecond[s].Add(1)
			}
			return nil
		}
		c.throttled.Add(1)
		if d := c.backoff(n); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}
}

// backoff is the wait before retry n, as examples/batch's retry layer waits when the response has
// no Retry-After: drawn uniformly from [0, min(10s, 500ms*2^(n-1))] ("full jitter"), from a
// seeded source. (A Retry-After is the Throttle's business here: it pauses the key.) Zero when the
// client retries at once.
func (c *simClient) backoff(n int) time.Duration {
	if c.noBackoff {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rng == nil {
		c.rng = rand.New(rand.NewPCG(3, 4))
	}
	ceil := min(10*time.Second, 500*time.Millisecond<<min(n-1, 10))
	return time.Duration(c.rng.Int64N(int64(ceil) + 1))
}

// runBatch sends n logical requests through c with the given number of workers and returns when
// all are done.
func (c *simClient) runBatch(t testing.TB, n, workers int) {
	t.Helper()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := c.do(context.Background(), start); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// runFor keeps the workers busy until d has passed.
func (c *simClient) runFor(t testing.TB, d time.Duration, workers int) {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := c.do(ctx, start); err != nil {
					return // the context ended, or the wait would outlast it
				}
			}
		})
	}
	wg.Wait()
}

// simResult sums up a batch run.
type simResult struct {
	n                   int
	elapsed             time.Duration
	attempts, throttled int64
	rate                float64 // the limiter's final pace
	stats               AdaptiveStats
}

func (r simResult) throttleShare() float64 { return float64(r.throttled) / float64(r.attempts) }

func (r simResult) String() string {
	return fmt.Sprintf("n=%d elapsed=%v attempts=%d 429s=%d (%.2f%%) pace=%.1f/s", r.n, r.elapsed.Round(time.Millisecond),
		r.attempts, r.throttled, 100*r.throttleShare(), r.rate)
}

func (c *simClient) result(n int) simResult {
	r := simResult{n: n, elapsed: time.Duration(c.lastDone.Load()), attempts: c.attempts.Load(), throttled: c.throttled.Load()}
	if a := c.adaptive(); a != nil {
		r.stats = a.Stats()
		r.rate = r.stats.Rate
	}
	return r
}
