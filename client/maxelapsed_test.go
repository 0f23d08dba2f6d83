package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
)

// startSources are the two ways the retry layer learns when a request began: told by the
// throttle below it, or, with an attempt timeout (which wraps the attempt), read by itself.
var startSources = []struct {
	name string
	opts []retry.Option
}{
	{"start told by the throttle", nil},
	{"start read by the retry layer", []retry.Option{retry.WithAttemptTimeout(time.Hour)}},
}

// tenSecondsOfRetries is retry.WithMaxElapsed(10 s) and five attempts, then opts.
func tenSecondsOfRetries(opts []retry.Option) []retry.Option {
	return append([]retry.Option{retry.WithMaxElapsed(10 * time.Second), retry.WithMaxAttempts(5)}, opts...)
}

// busy is a base transport that answers every request 503 after delay, counting them in calls.
func busy(calls *atomic.Int32, delay time.Duration) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		calls.Add(1)
		time.Sleep(delay)
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{},
			Body: io.NopCloser(strings.NewReader("busy")), Request: req}, nil
	})
}

// TestMaxElapsedCountsThePacersWait: retry.WithMaxElapsed bounds a request from the moment it
// entered the stack, its wait for the pace included. The retry layer takes that moment from the
// throttle below it (which reads the clock anyway) rather than read the clock itself; it must be
// the moment the wait began, not the one it ended. A pace of one request per 10 s holds the second
// request for 10 s; it fails (503), and with a 10 s bound there is no time left for a retry, with
// the attempt timeout on (the retry layer reads the clock itself) and off (the throttle tells it).
func TestMaxElapsedCountsThePacersWait(t *testing.T) {
	for _, tt := range startSources {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				tr := NewTransport(busy(&calls, 0), WithTokenBucket(0.1, 1), WithRetry(tenSecondsOfRetries(tt.opts)...))
				require.NoError(t, tr.Err())
				get := func() *http.Response {
					req := httptest.NewRequestWithContext(context.Background(), "GET", "http://api.test/items", nil)
					req.RequestURI = ""
					resp, err := tr.RoundTrip(req)
					require.NoError(t, err)
					resp.Body.Close()
					return resp
				}
				// The first request spends the burst and is retried after the pace's 10 s, with
				// time left: its bound counts from its own start.
				get()
				first := calls.Load()
				require.GreaterOrEqual(t, first, int32(2), "the first request had time for a retry")

				calls.Store(0)
				start := time.Now()
				resp := get()
				assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
				assert.Equal(t, int32(1), calls.Load(), "waited 10 s for its slot: no time left for a retry")
				// The pace's 10 s, to the bucket's float rounding (a nanosecond, after the first
				// request's random backoff): a retry would have added seconds.
				assert.InDelta(t, float64(10*time.Second), float64(time.Since(start)), float64(time.Millisecond))
			})
		})
	}
}

// TestMaxElapsedCountsASlowFirstAttempt: without a pace the throttle waits for nothing, and still
// tells the retry layer when the attempt began, before the round trip: a first attempt that took
// the whole bound (a server 10 s slow to answer 503) leaves no time for a retry. (A review found
// the start taken after the answer: the attempt's 10 s went uncounted and it was retried.)
func TestMaxElapsedCountsASlowFirstAttempt(t *testing.T) {
	for _, tt := range startSources {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				tr := NewTransport(busy(&calls, 10*time.Second), WithoutPace(), WithRetry(tenSecondsOfRetries(tt.opts)...))
				require.NoError(t, tr.Err())
				req := httptest.NewRequestWithContext(context.Background(), "GET", "http://api.test/items", nil)
				req.RequestURI = ""
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
				assert.Equal(t, int32(1), calls.Load(), "10 s spent: no time left for a retry")
			})
		})
	}
}
