package client

import (
	"net/http"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/testserver"
)

// TestLeakyBucketEvenSpacing: a leaky-bucket client spaces its requests evenly, measured on the
// server's arrival timestamps: every gap is exactly 1/rate, whatever the number of workers.
func TestLeakyBucketEvenSpacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 40 // per second: one every 25 ms
		var (
			mu       sync.Mutex
			arrivals []time.Time
		)
		base, _ := limitedHandler(t, []testserver.Rule{{Algorithm: "leaky-bucket", Limit: rate, Window: time.Second, Burst: 1}},
			testserver.WithRequestHook(func(now time.Time, _ *http.Request, res testserver.Result) {
				mu.Lock()
				defer mu.Unlock()
				require.True(t, res.Allowed, "a request was throttled")
				arrivals = append(arrivals, now)
			}))
		c := New(WithBase(base), WithLeakyBucket(rate, 1000))
		statuses := runBatch(t, c, "http://api.test/", 200, 12)
		assert.Equal(t, map[int]int{http.StatusOK: 200}, statuses)

		mu.Lock()
		defer mu.Unlock()
		sort.Slice(arrivals, func(i, j int) bool { return arrivals[i].Before(arrivals[j]) })
		for i := 1; i < len(arrivals); i++ {
			if gap := arrivals[i].Sub(arrivals[i-1]); gap != time.Second/rate {
				t.Fatalf("gap %d is %v, want %v", i, gap, time.Second/rate)
			}
		}
	})
}
