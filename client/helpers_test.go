package client

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
)

// handlerTransport serves requests in memory with an http.Handler, so that a whole client stack and
// a testserver limiter run inside one testing/synctest bubble on virtual time.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	if req.Body != nil {
		req.Body.Close()
	}
	return rec.Result(), nil
}

// limitedHandler returns an in-memory RoundTripper enforcing rules (answering admitted requests
// 200 "ok") and the limiter behind it. The limiter reads the (virtual) time.Now.
func limitedHandler(t *testing.T, rules []testserver.Rule, opts ...testserver.Option) (http.RoundTripper, *testserver.Limiter) {
	t.Helper()
	lim, err := testserver.NewLimiter(rules, opts...)
	require.NoError(t, err)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		_, _ = io.WriteString(w, "ok")
	})
	return handlerTransport{lim.Middleware(ok)}, lim
}

// counter is an Observer that counts events.
type counter struct {
	NopObserver
	attempts, retries, gaveUp, throttled, queued atomic.Int64
	status429                                    atomic.Int64
}

func (c *counter) Attempt(*http.Request, int) { c.attempts.Add(1) }
func (c *counter) Retry(_ *http.Request, _ int, r retry.Reason, _ time.Duration) {
	c.retries.Add(1)
	if r.Status == http.StatusTooManyRequests {
		c.status429.Add(1)
	}
}
func (c *counter) GaveUp(_ *http.Request, _ int, r retry.Reason, _ error) {
	c.gaveUp.Add(1)
	if r.Status == http.StatusTooManyRequests {
		c.status429.Add(1)
	}
}
func (c *counter) Throttled(*http.Request, string, time.Duration) { c.throttled.Add(1) }
func (c *counter) Queued(*http.Request, time.Duration)            { c.queued.Add(1) }

// runBatch sends n GETs to url with workers goroutines through c and returns the statuses seen.
func runBatch(t *testing.T, c *http.Client, url string, n, workers int) map[int]int {
	t.Helper()
	return runRequests(t, c, n, workers, func(int) (*http.Request, error) {
		return http.NewRequest(http.MethodGet, url, nil)
	})
}

// runRequests sends n requests through c from workers goroutines, request i built by newReq(i),
// and returns how many got each status; a request that fails is reported and ends its worker.
func runRequests(t *testing.T, c *http.Client, n, workers int, newReq func(i int) (*http.Request, error)) map[int]int {
	t.Helper()
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				req, err := newReq(int(i))
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Errorf("%s: %v", req.Method, err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return statuses
}

// trackedBody is a request body that records being closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }
