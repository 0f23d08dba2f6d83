package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
)

// handlerTransport answers requests with a handler in-process: no sockets, so that a whole batch
// runs in a testing/synctest bubble, in virtual time.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, req)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	resp := w.Result()
	resp.Request = req
	return resp, nil
}

// TestBatchWaitsOutAnHourWindow: against a GitHub-style limit of 100 an hour (a fixed window; its
// exhausted quota answered 403 with remaining 0 and the reset in Unix seconds), 110 requests with
// the batch's default -max-wait all succeed: the last 10 wait out the hour. An interactive client's
// max wait (client.DefaultMaxWait) fails those 10 instead: each after at most a pause of that
// length (throttle.WithMaxPause), not after the hour. In virtual time: the hour takes no real time.
func TestBatchWaitsOutAnHourWindow(t *testing.T) {
	const limit, n = 100, 110
	run := func(t *testing.T, args ...string) (res result, throttled, denied int64) {
		// The bubble's clock starts at 2000-01-01 00:00 UTC, and a Unix time below 1e9 (before
		// 2001-09-09) reads as delta seconds in package dialects, as it would be for any real
		// server: the server's clock runs 25 years later, still on an hour's boundary. Its Date
		// header tells the client so (package dialects measures resets against it).
		shift := time.Until(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		l, err := testserver.NewLimiter([]testserver.Rule{{Limit: limit, Window: time.Hour}}, testserver.WithDialect("github"),
			testserver.WithClock(func() time.Time { return time.Now().Add(shift) }))
		require.NoError(t, err)
		defer l.Close()
		ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
		cfg, err := parseFlags(append([]string{"-url", "http://api.test/items", "-n", "110", "-c", "16"}, args...))
		require.NoError(t, err)
		tc := &throttleCounter{next: handlerTransport{l.Middleware(ok)}}
		tr := client.NewTransport(nil, clientOptions(cfg, tc, &counter{})...)
		r := &runner{client: &http.Client{Transport: tr}, total: cfg.n, workers: cfg.workers,
			src: &countSource{n: cfg.n, method: cfg.method, target: cfg.target.String()}}
		res = r.run(t.Context())
		return res, tc.count(), l.Stats().Rules["default"].Denied
	}

	t.Run("batch default", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// The run starts where the epoch-aligned hour window starts.
			res, throttled, denied := run(t)
			assert.Equal(t, n, res.succeeded, "failures: %v", res.failures.list())
			assert.Zero(t, res.failures.count())
			assert.GreaterOrEqual(t, res.elapsed, time.Hour, "the last requests waited for the next window")
			// The retry waits out the reset plus up to the retry layer's jitter on a Retry-After
			// (retry.DefaultRetryAfterJitter: 10% of it).
			jitter := time.Duration(float64(time.Hour) * retry.DefaultRetryAfterJitter)
			assert.LessOrEqual(t, res.elapsed, time.Hour+jitter+resetSlack)
			t.Logf("110 requests, 100 an hour: %v (%.3f x the physical limit of 1h)", res.elapsed, res.elapsed.Hours())
			// The learner reads the quota and its reset from the headers and holds the last ten
			// for the next window: whatever the server refused (a 403 with nothing left) is
			// counted as a throttle, and nothing else is.
			assert.Equal(t, denied, throttled, "the server's refusals counted as throttles")
		})
	})

	t.Run("interactive max wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			res, _, _ := run(t, "-max-wait", client.DefaultMaxWait.String())
			assert.Equal(t, limit, res.succeeded)
			assert.Equal(t, n-limit, res.failures.count(), "the requests beyond the quota fail")
			assert.Less(t, res.elapsed, time.Hour, "rather than wait out the window")
		})
	})
}
