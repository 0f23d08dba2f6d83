package learn_test

import (
	"fmt"
	"testing"
	"time"
)

// A bucket of one request (throttled/throttled v2's GCRA without a burst) says "1 of 1 left, whole
// again in 1 s" after every admission, whatever its rate, and was paced at one a second: 10x at
// 10/s, 20x at 20/s. The probe halves the window while admissions show it (quotaOfOneProbe) and
// stops at its first refusal, with the window shown by the admissions: at most twice the server's
// (a refused test is under the window, and it was half of one shown) plus the trips' spread,
// which the sim keeps under a round trip. Every cell loses nothing; it draws at most the probe's
// refusal and the requests sent at the refused pace (over half the window) within its round trip;
// it learns a window within that bound and never above the server's rate; and it finishes within
// 1.10x of that pace plus the probe's own time (a second from the reading, and the refusal's
// Retry-After of a second). A quota that truly keeps one a second pays the refusal and no more
// than 1.10x of its physical time.
func TestAQuotaOfOneIsProbed(t *testing.T) {
	for _, alg := range []string{"token-bucket", "leaky-bucket"} {
		for _, rate := range []int64{1, 10, 20, 50} {
			for _, rtt := range []time.Duration{time.Millisecond, 50 * time.Millisecond} {
				for _, workers := range []int{1, 4, 16} {
					c := cell{alg, rate, time.Second, 1, "burst-limit", rtt, workers, 300}
					if float64(workers)/rtt.Seconds() < 2*float64(rate) {
						continue // worker-bound: the workers' trips set the pace, not the bucket
					}
					w := c.window / time.Duration(rate)
					trip := rtt + rtt/10
					refusals := int64(1 + (2*trip+w-1)/w)
					window := 2*w + rtt
					limit := time.Duration(1.10 * float64(2*time.Second+time.Duration(c.n)*window))
					if rate == 1 {
						limit = time.Duration(1.10 * float64(physical(c)))
					}
					for seed := uint64(1); seed <= 3; seed++ {
						o := runCell(t, c, seed)
						desc := fmt.Sprintf("%s %d/s burst 1, rtt %v, %d workers, %d requests, seed %d: %v (%.2fx), %d of %d refused, learned %+v",
							alg, rate, rtt, workers, c.n, seed, o.elapsed, float64(o.elapsed)/float64(physical(c)), o.denied, o.attempts, o.limit)
						switch {
						case o.lost != 0 || o.denied > refusals:
							t.Errorf("%s; want nothing lost and at most %d refused", desc, refusals)
						case o.limit.Window > window || o.elapsed > limit:
							t.Errorf("%s; want a window of at most %v and at most %v", desc, window, limit)
						case float64(o.limit.Quota)/float64(o.limit.Window) > float64(rate)/float64(c.window):
							t.Errorf("%s; learned more than the server's rate", desc)
						default:
							t.Log(desc)
						}
					}
				}
			}
		}
	}
}
