package learn_test

import (
	"testing"
	"time"
)

// TestARareLongTripDoesNotThrottleASlidingLog: on a loaded host a trip now and then takes far
// longer than the others (a scheduling delay, a collection), which the smoothed deviation of the
// round trip forgets within a few answers. A request that reached a sliding log late holds its
// place until a window after it arrived, so the request a window of sends after it, on time,
// arrives inside that window and is refused, and the refusal's Retry-After (a whole second)
// costs a window's sends (in real time, 200/s behind 50 ms: 3 to 19 throttles in 4,000 requests
// and 1.25x to 2x the least time). The window of sends keeps the longest recent trip's excess as
// its slack. Across round trips and workers, with a trip 20 ms late every 301 legs (both ways in
// turn): no request lost, at most 0.5 % of attempts throttled (the goal with honest headers), and
// at most 1.10x the least time (a quota per window after the first, plus a round trip). 16 workers
// behind 50 ms are left out: they keep at most 320 requests a second in flight, under twice the
// rate (the sweep's worker-bound cells), where the least time is longer than that.
func TestARareLongTripDoesNotThrottleASlidingLog(t *testing.T) {
	const limit, window, n = 200, time.Second, 3000
	for _, p := range []struct {
		rtt     time.Duration
		workers int
	}{{time.Millisecond, 16}, {time.Millisecond, 64}, {50 * time.Millisecond, 64}} {
		c := cell{"sliding-log", limit, window, limit, "honest", p.rtt, p.workers, n}
		o := runCellWith(t, c, 1, func(s *simServer) { s.spikeEvery, s.spike = 301, 20*time.Millisecond })
		best := time.Duration(n-limit)*window/limit + p.rtt
		ratio := float64(o.elapsed) / float64(best)
		t.Logf("rtt %v, %d workers: %.3fx of %v, %d throttled of %d attempts, lost %d", p.rtt, p.workers, ratio, best, o.denied, o.attempts, o.lost)
		if o.lost != 0 || float64(o.denied) > 0.005*float64(o.attempts) || ratio > 1.10 {
			t.Errorf("rtt %v, %d workers: %.3fx, %d throttled of %d attempts, lost %d; want at most 1.10x, 0.5%%, none lost; events %q",
				p.rtt, p.workers, ratio, o.denied, o.attempts, o.lost, o.events)
		}
	}
}
