package queue

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

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWaitObserver: the observer hears of a request that waited in line, with how long, and of
// none that got a place at once.
func TestWaitObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu     sync.Mutex
			waited []time.Duration
		)
		q, err := New(WithMaxInFlight(1), WithWaitObserver(func(_ *http.Request, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			waited = append(waited, d)
		}))
		require.NoError(t, err)
		rt := NewTransport(roundTripperFunc(func(*http.Request) (*http.Response, error) {
			time.Sleep(2 * time.Second) // the first request holds the only place for 2 s
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		}), q)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://a.example/", nil)
				require.NoError(t, err)
				resp, err := rt.RoundTrip(req)
				require.NoError(t, err)
				resp.Body.Close()
			})
			synctest.Wait() // the first is in flight before the second arrives
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []time.Duration{2 * time.Second}, waited)
	})
}
