package learn_test

import (
	"fmt"
	"testing"
	"time"
)

// TestASearchPastTheTripsReachEndsNearTheRate: where the doubling refuted is more than a request
// per round trip, no bisection follows it (a refuted test costs its throttle and those in flight),
// and only the probes climb from the pace the search held, one quiet span each. The held pace
// lies anywhere between half the rate and the rate, so the estimate takes the rate the server
// admitted at the refuted pace, within the bracket. Small bursts at 20-100 ms round trips, where
// a search that waits out the refilled credit stops at the last doubling that truly held: 1.10-1.29x
// before this rule (a review's finding), 1.02-1.09x with it. Not asserted: a burst of 2 at 50/s
// behind 20 ms, 1.12x with the rule and before the search step alike (1.58x between).
func TestASearchPastTheTripsReachEndsNearTheRate(t *testing.T) {
	cells := []cell{
		{"token-bucket", 50, time.Second, 3, "none", 20 * time.Millisecond, 16, 750},
		{"token-bucket", 100, time.Second, 5, "none", 50 * time.Millisecond, 16, 2000},
		{"leaky-bucket", 50, time.Second, 5, "none", 50 * time.Millisecond, 16, 1000},
		{"token-bucket", 200, time.Second, 5, "none", 20 * time.Millisecond, 16, 3000},
	}
	for _, c := range cells {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s-%d-burst%d-%v-seed%d", c.alg, c.limit, c.burst, c.rtt, seed), func(t *testing.T) {
				o := runCell(t, c, seed)
				ratio := float64(o.elapsed) / float64(physical(c))
				t.Logf("%.3fx the physical limit, %.2f%% throttled, lost %d", ratio, 100*o.share(), o.lost)
				if o.lost != 0 || ratio > 1.10 || o.share() > 0.03 {
					t.Errorf("%.3fx, %.2f%% throttled, lost %d; want the headerless goal: at most 1.10x and 3%%, none lost", ratio, 100*o.share(), o.lost)
				}
			})
		}
	}
}
