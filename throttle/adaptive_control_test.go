package throttle

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// Tests of the control law against the simulated server (adaptive_sim_test.go), in virtual time.

// serverBurst is the burst the simulations give the buckets (the window algorithms' is their limit).
func serverBurst(name string) int64 {
	if name == algorithm.NameTokenBucket || name == algorithm.NameLeakyBucket {
		return 10
	}
	return 0
}

// rateOver is the success rate of c over the seconds [from, to) of its run.
func (c *simClient) rateOver(from, to int) float64 {
	var n int64
	for s := from; s < to; s++ {
		n += c.perSecond[s].Load()
	}
	return float64(n) / float64(to-from)
}

// TestAdaptiveConvergence: without headers, from far below (1/s) and far above (2,000/s) the
// server's 200/s, the limiter settles just under the server's rate: over seconds 10 to 20 the
// success rate is within 10% below it (and never above what the server admits), and few attempts
// draw a 429.
func TestAdaptiveConvergence(t *testing.T) {
	const limit = 200
	for _, name := range []string{algorithm.NameTokenBucket, algorithm.NameFixedWindow, algorithm.NameSlidingLog} {
		for _, start := range []struct {
			label string
			rate  float64
		}{{"from below", 1}, {"from above", 2000}} {
			t.Run(name+"/"+start.label, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					time.Sleep(370 * time.Millisecond)
					srv := newSimServer(t, name, limit, time.Second, serverBurst(name), false)
					c := newSimClient(t, srv, 20, WithInitialRate(start.rate))
					c.runFor(t, 20*time.Second, 16)
					got := c.rateOver(10, 20)
					share := float64(c.throttled.Load()) / float64(c.attempts.Load())
					t.Logf("success rate %.1f/s over seconds 10-20, 429s %.2f%% of %d attempts, pace %.1f/s",
						got, 100*share, c.attempts.Load(), c.adaptive().Rate())
					assert.GreaterOrEqual(t, got, 0.9*limit)
					assert.LessOrEqual(t, got, float64(limit)+1)
					assert.LessOrEqual(t, share, 0.03)
				})
			})
		}
	}
}

// TestAdaptiveLimitChange: the server's limit halves at 10 s (200/s to 100/s) and doubles back at
// 20 s; with and without headers the limiter follows: over the last 5 s of each phase the success
// rate is within 15% below the limit of the phase.
func TestAdaptiveLimitChange(t *testing.T) {
	for _, name := range []string{algorithm.NameTokenBucket, algorithm.NameFixedWindow} {
		for _, headers := range []bool{true, false} {
			label := name + "/no-headers"
			if headers {
				label = name + "/headers"
			}
			t.Run(label, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					time.Sleep(370 * time.Millisecond)
					srv := newSimServer(t, name, 200, time.Second, serverBurst(name), headers)
					srv.changeLimit(t, 10*time.Second, 100)
					srv.changeLimit(t, 20*time.Second, 200)
					c := newSimClient(t, srv, 30)
					c.runFor(t, 30*time.Second, 16)
					phases := []struct {
						from, to int
						limit    float64
					}{{5, 10, 200}, {15, 20, 100}, {25, 30, 200}}
					share := float64(c.throttled.Load()) / float64(c.attempts.Load())
					for _, p := range phases {
						got := c.rateOver(p.from, p.to)
						t.Logf("seconds %d-%d: %.1f/s (limit %.0f/s)", p.from, p.to, got, p.limit)
						assert.GreaterOrEqual(t, got, 0.85*p.limit, "seconds %d-%d", p.from, p.to)
						assert.LessOrEqual(t, got, p.limit+2, "seconds %d-%d", p.from, p.to)
					}
					t.Logf("429s %.2f%% of %d attempts", 100*share, c.attempts.Load())
					assert.LessOrEqual(t, share, 0.05)
				})
			})
		}
	}
}

// TestAdaptiveFairness: two clients (two Throttles, two limiters) share one server key; the
// second starts 2 s after the first. Over the last 20 s of a 60 s run each gets half of what the
// server admits, within 10 percentage points, and together they get at least 60% of the server's
// rate (each 429 with a Retry-After pauses its client for a second).
//
// Without headers the shares converge through the throttles alone (proportional cuts, sublinear
// growth), over tens of seconds; against a fixed window without headers they do not converge
// (both are throttled together at the end of each window and return to their own levels), which
// is why that case is not here.
func TestAdaptiveFairness(t *testing.T) {
	const limit = 200
	tests := []struct {
		name    string
		headers bool
	}{
		{algorithm.NameTokenBucket, true},
		{algorithm.NameTokenBucket, false},
		{algorithm.NameFixedWindow, true},
		{algorithm.NameSlidingLog, true},
		{algorithm.NameSlidingLog, false},
		{algorithm.NameSlidingWindow, true},
	}
	for _, tt := range tests {
		label := tt.name + "/no-headers"
		if tt.headers {
			label = tt.name + "/headers"
		}
		t.Run(label, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(370 * time.Millisecond)
				srv := newSimServer(t, tt.name, limit, time.Second, serverBurst(tt.name), tt.headers)
				a := newSimClient(t, srv, 60)
				b := newSimClient(t, srv, 60)
				var wg sync.WaitGroup
				wg.Go(func() { a.runFor(t, 60*time.Second, 16) })
				wg.Go(func() {
					time.Sleep(2 * time.Second)
					b.runFor(t, 58*time.Second, 16)
				})
				wg.Wait()
				ra, rb := a.rateOver(40, 60), b.rateOver(38, 58) // the same 20 s of the run
				shareA := ra / (ra + rb)
				t.Logf("A %.1f/s, B %.1f/s: A's share %.3f; 429s A %d B %d", ra, rb, shareA, a.throttled.Load(), b.throttled.Load())
				assert.InDelta(t, 0.5, shareA, 0.1)
				assert.GreaterOrEqual(t, ra+rb, 0.6*limit)
			})
		})
	}
}

// TestAdaptiveLyingServer: a server that enforces 200/s but declares a billion per second (clamped
// to the maximum, then not believed once it throttles more than it admits), a remaining quota of
// a trillion (clamped), or negative and garbage fields (ignored), still gets the batch through in
// good time and with few 429s. Every 429 of this server carries a Retry-After, which pauses the
// key for a second: the lie about the rate costs two such pauses before the limiter stops
// believing it.
func TestAdaptiveLyingServer(t *testing.T) {
	tests := []struct {
		name string
		lie  func(http.Header)
	}{
		{"a billion per second", func(h http.Header) {
			h.Set(ratelimitheader.HeaderRateLimitPolicy, `"default";q=1000000000;w=1`)
			h.Del(ratelimitheader.HeaderXLimit)
		}},
		{"a trillion remaining", func(h http.Header) {
			h.Set(ratelimitheader.HeaderRateLimit, `"default";r=1000000000000;t=1`)
			h.Del(ratelimitheader.HeaderXRemaining)
		}},
		{"negative and garbage", func(h http.Header) {
			h.Set(ratelimitheader.HeaderRateLimitPolicy, `"default";q=-200;w=abc`)
			h.Set(ratelimitheader.HeaderRateLimit, `"default";r=-1;t=-1`)
			h.Set(ratelimitheader.HeaderXLimit, "-5")
			h.Set(ratelimitheader.HeaderXRemaining, "many")
			h.Set(ratelimitheader.HeaderXReset, "soon")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(370 * time.Millisecond)
				srv := newSimServer(t, algorithm.NameTokenBucket, 200, time.Second, 10, true)
				srv.lie = tt.lie
				c := newSimClient(t, srv, 30)
				c.runBatch(t, 2000, 16)
				r := c.result(2000)
				ratio := r.elapsed.Seconds() / (1990.0 / 200)
				t.Logf("ratio %.3f, %v", ratio, r)
				assert.LessOrEqual(t, ratio, 1.35)
				assert.LessOrEqual(t, r.throttleShare(), 0.03)
			})
		})
	}
}
