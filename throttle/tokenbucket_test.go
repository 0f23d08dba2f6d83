package throttle

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenBucketDelays(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		rate    float64
		burst   int
		arrive  []time.Duration // arrival of each request, after t0
		wantRun []time.Duration // when each may go, after t0
	}{
		{"burst then pace", 10, 3, []time.Duration{0, 0, 0, 0, 0}, []time.Duration{0, 0, 0, 100 * ms, 200 * ms}},
		{"rate 4 burst 1", 4, 1, []time.Duration{0, 0, 0}, []time.Duration{0, 250 * ms, 500 * ms}},
		{"spaced arrivals never wait", 10, 1, []time.Duration{0, 100 * ms, 250 * ms}, []time.Duration{0, 100 * ms, 250 * ms}},
		{"partial refill", 10, 2, []time.Duration{0, 0, 50 * ms, 50 * ms}, []time.Duration{0, 0, 100 * ms, 200 * ms}},
		{"full refill after idle", 1000, 2, []time.Duration{0, 0, 0, time.Second, time.Second, time.Second}, []time.Duration{0, 0, ms, time.Second, time.Second, time.Second + ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewTokenBucket(tt.rate, tt.burst)
			require.NoError(t, err)
			for i, a := range tt.arrive {
				now := t0.Add(a)
				r := reserve(t, l, now)
				assert.Equal(t, tt.wantRun[i], a+r.Delay(now), "request %d", i)
			}
		})
	}
}

// TestTokenBucketConcurrentPacing checks the exact schedule of many concurrent waiters.
func TestTokenBucketConcurrentPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := NewTokenBucket(20, 5) // 50ms per token after a burst of 5
		require.NoError(t, err)
		start := time.Now()
		var mu sync.Mutex
		var got []time.Duration
		var wg sync.WaitGroup
		for range 25 {
			wg.Go(func() {
				if assert.NoError(t, Wait(context.Background(), l)) {
					mu.Lock()
					got = append(got, time.Since(start))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		want := make(map[time.Duration]int)
		for i := range 25 {
			want[time.Duration(max(0, i-4))*50*time.Millisecond]++
		}
		have := make(map[time.Duration]int)
		for _, d := range got {
			have[d]++
		}
		assert.Equal(t, want, have)
	})
}
