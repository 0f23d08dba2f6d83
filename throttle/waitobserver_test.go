package throttle

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaitObserver: the observer hears of every attempt the Throttle held back, with how long it
// waited, and of no attempt that went straight through.
func TestWaitObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type event struct {
			key    string
			waited time.Duration
		}
		var (
			mu     sync.Mutex
			events []event
		)
		th, err := New(
			WithLimiter(func(string) (Limiter, error) { return NewLeakyBucket(10, 100) }),
			WithWaitObserver(func(_ *http.Request, key string, waited time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, event{key, waited})
			}),
		)
		require.NoError(t, err)
		rt := NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
			return response(http.StatusOK, nil), nil
		}), th)

		send := func() {
			resp, err := rt.RoundTrip(newRequest(t, context.Background(), "http://a.example/"))
			require.NoError(t, err)
			resp.Body.Close()
		}
		send() // due at once: not observed
		send() // 100 ms behind the first
		th.Pause("a.example", time.Now().Add(time.Second))
		send() // sits out the pause, then its slot

		mu.Lock()
		defer mu.Unlock()
		require.Len(t, events, 2)
		assert.Equal(t, event{"a.example", 100 * time.Millisecond}, events[0])
		assert.Equal(t, "a.example", events[1].key)
		assert.Equal(t, time.Second, events[1].waited, "the pause, after which the slot is already due")
	})
}

// TestLimiterAccessor: Limiter returns the key's limiter once the key was used, nil before and for
// unpaced keys.
func TestLimiterAccessor(t *testing.T) {
	th, err := New(WithLimiter(func(key string) (Limiter, error) {
		if key == "free.example" {
			return nil, nil
		}
		return NewTokenBucket(10, 1)
	}))
	require.NoError(t, err)
	assert.Nil(t, th.Limiter("a.example"), "never used")
	require.NoError(t, th.Wait(context.Background(), "a.example"))
	require.NoError(t, th.Wait(context.Background(), "free.example"))
	assert.NotNil(t, th.Limiter("a.example"))
	assert.Nil(t, th.Limiter("free.example"))
}
