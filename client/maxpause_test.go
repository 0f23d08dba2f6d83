package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
)

// TestHugeRetryAfterDoesNotShutTheHostOff (issue 13 §8): one response with "Retry-After:
// 999999999999" is given back to its caller, and the host is paused for no longer than the retry
// layer's longest Retry-After, so later requests go through after it instead of failing (or, with
// WithMaxWait(0), waiting a day): by the Throttle, and by the learning limiter of the default pace,
// which holds on a Retry-After of its own (a new-user trial found it holding for the whole day).
func TestHugeRetryAfterDoesNotShutTheHostOff(t *testing.T) {
	for _, pace := range []struct {
		name string
		opts []Option
	}{{"without pace", []Option{WithoutPace()}}, {"learned pace", nil}} {
		t.Run(pace.name, func(t *testing.T) { hugeRetryAfter(t, pace.opts) })
	}
}

func hugeRetryAfter(t *testing.T, paceOpts []Option) {
	tests := []struct {
		name      string
		opts      []Option
		wantPause time.Duration
	}{
		{"defaults", nil, retry.DefaultMaxRetryAfter},
		{"WithMaxWait(0)", []Option{WithMaxWait(0)}, retry.DefaultMaxRetryAfter},
		{"a shorter max Retry-After", []Option{WithRetry(retry.WithMaxRetryAfter(10 * time.Second))}, 10 * time.Second},
		{"a batch that waits out hour-long windows",
			[]Option{WithRetry(retry.WithMaxRetryAfter(time.Hour)), WithMaxWait(time.Hour)}, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := throttledOnce("999999999999")
				tr := NewTransport(base, append(append([]Option(nil), paceOpts...), tt.opts...)...)
				require.NoError(t, tr.Err())
				start := time.Now()
				get := func() (*http.Response, error) {
					req := httptest.NewRequestWithContext(context.Background(), "GET", "http://api.test/items", nil)
					req.RequestURI = ""
					return tr.RoundTrip(req)
				}
				resp, err := get()
				require.NoError(t, err)
				assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "too long to wait out: given back")
				resp.Body.Close()
				assert.Equal(t, start.Add(tt.wantPause), tr.Throttle().PausedUntil("api.test"))

				resp, err = get()
				require.NoError(t, err, "the next request waits out the bounded pause")
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				resp.Body.Close()
				assert.Equal(t, tt.wantPause, time.Since(start))
			})
		})
	}
}

// TestResumeEndsTheLearnersHoldToo: a pause drawn by a server's Retry-After and ended from Go
// (Throttle.Resume) also ends the learning limiter's own hold on that Retry-After: a request made
// after the Resume goes at once.
func TestResumeEndsTheLearnersHoldToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := throttledOnce("3600")
		tr := NewTransport(base, WithRetry(retry.WithMaxAttempts(1), retry.WithMaxRetryAfter(2*time.Hour)), WithMaxWait(2*time.Hour))
		require.NoError(t, tr.Err())
		get := func() int {
			req := httptest.NewRequestWithContext(context.Background(), "GET", "http://api.test/items", nil)
			req.RequestURI = ""
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		require.Equal(t, http.StatusTooManyRequests, get()) // the key is paused for the hour
		time.Sleep(time.Second)
		tr.Throttle().Resume("api.test")
		start := time.Now()
		assert.Equal(t, http.StatusOK, get())
		assert.Less(t, time.Since(start), time.Minute, "the request went after the Resume, not after the hour")
	})
}

// TestResumeLetsRequestsGoAtOnce: a pause ended from Go (Throttle.Resume) releases the requests
// sitting it out.
func TestResumeLetsRequestsGoAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
		tr := NewTransport(base, WithoutPace(), WithMaxWait(0))
		start := time.Now()
		tr.Throttle().Pause("api.test", start.Add(24*time.Hour))
		done := make(chan error, 1)
		go func() {
			req := httptest.NewRequestWithContext(context.Background(), "GET", "http://api.test/items", nil)
			req.RequestURI = ""
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		time.Sleep(time.Second)
		tr.Throttle().Resume("api.test")
		require.NoError(t, <-done)
		assert.Equal(t, time.Second, time.Since(start))
	})
}

// throttledOnce is a base transport that answers its first request 429 with Retry-After ra, and
// every later one 200.
func throttledOnce(ra string) handlerTransport {
	var calls atomic.Int32
	return handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", ra)
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})}
}
