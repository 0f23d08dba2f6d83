package redisthrottle

import (
	"fmt"
	"testing"
	"time"

	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestSimulatedSharing runs three processes of five workers each, sharing one learned quota,
// against every server algorithm with and without RateLimit headers (2,000 requests, limit 200/s,
// token and leaky bucket burst 10), and checks issue 4's goals for the shared pace: with headers
// elapsed <= 1.03 x the physical limit and <= 0.5% of attempts throttled; without headers
// <= 1.10 x and <= 3%; never a lost request.
func TestSimulatedSharing(t *testing.T) {
	url := redisURL(t)
	for _, headers := range []bool{true, false} {
		for _, name := range algorithm.Names() {
			t.Run(fmt.Sprintf("%s/headers=%v", name, headers), func(t *testing.T) {
				c := simConfig{
					alg: name, limit: 200, window: time.Second, headers: headers,
					processes: 3, workers: 5, n: 2000, rtt: time.Millisecond, jitter: 500 * time.Microsecond,
				}
				if name == algorithm.NameTokenBucket || name == algorithm.NameLeakyBucket {
					c.burst = 10
				}
				r := runSim(t, url, fmt.Sprintf("sim-%s-%v", name, headers), c)
				maxRatio, maxShare := 1.10, 0.03
				if headers {
					maxRatio, maxShare = 1.03, 0.005
				}
				t.Logf("%-15s headers=%-5v ratio %.3f  429s %5.2f%% (%d of %d)  rates %.1f", name, headers, r.ratio(c), 100*r.share(), r.throttled, r.attempts, r.rates)
				if r.lost != 0 {
					t.Errorf("%d requests lost", r.lost)
				}
				if r.ratio(c) > maxRatio || r.share() > maxShare {
					t.Errorf("ratio %.3f (max %.2f), 429 share %.2f%% (max %.1f%%)", r.ratio(c), maxRatio, 100*r.share(), 100*maxShare)
				}
			})
		}
	}
}
