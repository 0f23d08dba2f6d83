package testserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShapeHoldsUntilSlot runs the middleware in a synctest bubble, where time is virtual: each
// admitted request reaches the handler exactly at its leaky-bucket slot, one interval apart, and a
// request beyond the queue is denied at once.
func TestShapeHoldsUntilSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustLimiter([]Rule{{Name: "shaped", Algorithm: "leaky-bucket", Limit: 10, Window: 10 * time.Second, Burst: 5, Shape: true}})
		defer l.Close()
		var mu sync.Mutex
		var served []time.Duration
		start := time.Now()
		h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			served = append(served, time.Since(start))
			mu.Unlock()
		}))

		var wg sync.WaitGroup
		codes := make([]int, 6)
		for i := range 5 {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
				codes[i] = rec.Code
			})
		}
		synctest.Wait() // all five are decided and held
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		codes[5] = rec.Code
		assert.Equal(t, time.Duration(0), time.Since(start), "the sixth is denied without waiting")
		assert.Equal(t, "1", rec.Header().Get("Retry-After"))
		wg.Wait()

		assert.Equal(t, []int{200, 200, 200, 200, 200, 429}, codes)
		slices.Sort(served)
		assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}, served)
		assert.Equal(t, 4*time.Second, time.Since(start))
	})
}

func TestShapeCancelledWhileHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustLimiter([]Rule{{Name: "shaped", Algorithm: "leaky-bucket", Limit: 1, Window: time.Minute, Burst: 3, Shape: true}})
		defer l.Close()
		start := time.Now()
		called := 0
		h := l.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called++ }))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) // slot 0: served now
		require.Equal(t, 1, called)

		ctx, cancel := context.WithCancel(context.Background())
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil).WithContext(ctx)) // slot 1m
		}()
		synctest.Wait()
		time.Sleep(30 * time.Second)
		cancel()
		<-done
		assert.Equal(t, 1, called, "the cancelled request never reached the handler")
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
		assert.Equal(t, 30*time.Second, time.Since(start), "cancelled at once")
		// The cancelled request keeps its slot (1m): the next one queues behind it, at 2m.
		res, err := l.Decide(httptest.NewRequest("GET", "/", nil))
		require.NoError(t, err)
		assert.True(t, res.Allowed)
		assert.Equal(t, 90*time.Second, res.Delay)
	})
}

// TestLatencyInVirtualTime checks the Server's response latency and injected latency exactly.
func TestLatencyInVirtualTime(t *testing.T) {
	s := NewT(t, WithResponse(Response{Latency: 500 * time.Millisecond}), WithFaults(Faults{Latency: 2 * time.Second, LatencyRate: 1}))
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		assert.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, 2500*time.Millisecond, time.Since(start))
	})
	assert.Equal(t, int64(1), s.Stats().Server.Slowed)
}
