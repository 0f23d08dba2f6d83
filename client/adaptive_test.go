package client

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
)

// TestDefaultLearnsTheRate: a client with no options, against a server it was told nothing about,
// finishes the batch with no lost request, close to the physical limit, with few 429s; and it
// reports the rate it learned.
func TestDefaultLearnsTheRate(t *testing.T) {
	const (
		limit   = 100
		burst   = 10
		n       = 1000
		workers = 16
	)
	for _, headers := range []bool{true, false} {
		for _, alg := range algorithm.Names() {
			name := alg + "/headers"
			if !headers {
				name = alg + "/429-only"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					serverBurst := int64(limit)
					initial := limit
					if alg == algorithm.NameTokenBucket || alg == algorithm.NameLeakyBucket {
						serverBurst, initial = burst, burst
					}
					base, lim := limitedHandler(t, []testserver.Rule{{Algorithm: alg, Limit: limit, Window: time.Second, Burst: serverBurst}},
						testserver.WithHeaders(headers))
					tr := NewTransport(base, WithRetry())
					c := &http.Client{Transport: tr}
					start := time.Now()
					statuses := runBatch(t, c, "http://api.test/", n, workers)
					elapsed := time.Since(start)

					assert.Equal(t, map[int]int{http.StatusOK: n}, statuses, "lost requests")
					counts := lim.Stats().Rules["default"]
					share := float64(counts.Denied) / float64(counts.Allowed+counts.Denied)
					physical := time.Duration(float64(n-initial) / limit * float64(time.Second))
					ratio := float64(elapsed) / float64(physical)
					rate, ok := tr.LearnedRate("api.test")
					t.Logf("elapsed %.3f× physical, 429 share %.2f%%, learned %.1f/s", ratio, 100*share, rate)
					assert.True(t, ok, "no learned rate")
					maxRatio, maxShare := 1.10, 0.03
					if headers {
						maxRatio, maxShare = 1.03, 0.005
					}
					assert.LessOrEqual(t, ratio, maxRatio, "elapsed over the physical limit")
					assert.LessOrEqual(t, share, maxShare, "share of attempts that drew a 429")
				})
			})
		}
	}
}
