package throttle

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/internal/ratelimitheader"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestAdaptiveGoalsLegacyHeaders holds the limiter to issue 4's goals with headers (elapsed <=
// 1.03 x the physical limit, 429s <= 0.5% of attempts) against servers that speak only the most
// common dialect in the wild: X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset, with
// no window declared (GitHub's and many gateways' headers), and Retry-After on a 429.
func TestAdaptiveGoalsLegacyHeaders(t *testing.T) {
	const (
		n       = 2000
		workers = 16
		limit   = 200
		burst   = 10
		phase   = 370 * time.Millisecond
	)
	legacyOnly := func(h http.Header) {
		h.Del(ratelimitheader.HeaderRateLimitPolicy)
		h.Del(ratelimitheader.HeaderRateLimit)
	}
	for _, name := range algorithm.Names() {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := int64(0)
				if name == algorithm.NameTokenBucket || name == algorithm.NameLeakyBucket {
					b = burst
				}
				time.Sleep(phase)
				srv := newSimServer(t, name, limit, time.Second, b, true)
				srv.lie = legacyOnly
				c := newSimClient(t, srv, 20)
				c.runBatch(t, n, workers)
				r := c.result(n)
				physical := physicalLimit(name, n, limit, b, time.Second, phase)
				ratio := r.elapsed.Seconds() / physical.Seconds()
				t.Logf("%-16s ratio %.3f (physical %v) 429s %.2f%% | %v | %+v", name, ratio, physical, 100*r.throttleShare(), r, r.stats)
				if ratio > 1.03 {
					t.Errorf("elapsed %v is %.3f x the physical limit %v, want <= 1.03", r.elapsed, ratio, physical)
				}
				if s := r.throttleShare(); s > 0.005 {
					t.Errorf("429s are %.2f%% of attempts, want <= 0.5%%", 100*s)
				}
			})
		})
	}
}

// TestWindowGuess: a limit declared without a window takes the longest reset of a success seen, in
// whole seconds rounded up, at least one second; a declared window is left alone, and neither a
// throttle's reset (a penalty) nor a clamped one (MaxDelay: a date far off) counts.
func TestWindowGuess(t *testing.T) {
	var g windowGuess
	steps := []struct {
		info      ratelimitheader.Info
		throttled bool
		want      time.Duration
	}{
		{ratelimitheader.Info{Limit: 100}, false, 0}, // no reset yet: no guess
		{ratelimitheader.Info{Limit: 100, Reset: 300 * time.Millisecond, HasReset: true}, false, time.Second},
		{ratelimitheader.Info{Limit: 100, Reset: 1500 * time.Millisecond, HasReset: true}, false, 2 * time.Second},
		{ratelimitheader.Info{Limit: 100, Reset: time.Second, HasReset: true}, false, 2 * time.Second}, // only ever longer
		{ratelimitheader.Info{Limit: 100, Reset: time.Hour, HasReset: true}, true, 2 * time.Second},    // a throttle's penalty
		{ratelimitheader.Info{Limit: 100, Reset: ratelimitheader.MaxDelay, HasReset: true}, false, 2 * time.Second},
		{ratelimitheader.Info{Limit: 100, Reset: 59 * time.Second, HasReset: true}, false, 59 * time.Second},
		{ratelimitheader.Info{Limit: 100, Window: 10 * time.Second, Reset: 3 * time.Second, HasReset: true}, false, 10 * time.Second},
		{ratelimitheader.Info{Limit: 100}, false, 59 * time.Second},                           // no reset: the guess stands
		{ratelimitheader.Info{Reset: 70 * time.Second, HasReset: true}, false, 0},             // no limit: no quota to pace
		{ratelimitheader.Info{Limit: 100, Reset: 0, HasReset: true}, false, 59 * time.Second}, // a reset now says little
	}
	for i, s := range steps {
		info := s.info
		g.fill(&info, s.throttled)
		if info.Window != s.want {
			t.Errorf("step %d: window %v, want %v", i, info.Window, s.want)
		}
	}
}

// TestAdaptiveMillisecondResets: a server that sends X-RateLimit-Reset as a Unix time in
// milliseconds is understood (no pace of 100 a day from a reset read as a far-off date): 150
// requests against 100 per second are paced near that rate.
func TestAdaptiveMillisecondResets(t *testing.T) {
	a := newAdaptive(t)
	now := at0
	for i := range 150 {
		r, err := a.Reserve(now)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(r.Delay(now))
		h := http.Header{}
		h.Set("X-Ratelimit-Limit", "100")
		h.Set("X-Ratelimit-Remaining", fmt.Sprint(max(0, 99-i)))
		h.Set("X-Ratelimit-Reset", fmt.Sprint(now.Add(time.Second).UnixMilli()))
		now = now.Add(time.Millisecond)
		a.Observe(now, &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody}, nil)
	}
	if rate := a.Rate(); rate < 50 || rate > 100 {
		t.Errorf("pace %.4g/s, want about 100/s", rate)
	}
}
