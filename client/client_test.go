package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/queue"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/testserver"
	"github.com/steadyhttp/steady/testserver/algorithm"
	"github.com/steadyhttp/steady/throttle"
)

// TestToldRateNoThrottling: a client told the server's rate finishes a batch against every server
// algorithm with zero 429s, with either client algorithm, in (virtual) time close to the physical
// limit.
func TestToldRateNoThrottling(t *testing.T) {
	const (
		limit   = 200 // per second
		n       = 600
		workers = 16
	)
	for _, alg := range algorithm.Names() {
		bucket := alg == algorithm.NameTokenBucket || alg == algorithm.NameLeakyBucket
		serverBurst, clientBurst := int64(limit), 1
		if bucket {
			serverBurst, clientBurst = 10, 10
		}
		told := float64(limit)
		if alg == algorithm.NameSlidingWindow {
			// The sliding window counter weights the previous window as if its requests were spread
			// evenly: a client smooth at exactly L per W has L in the previous window and is denied
			// at the very start of the next. Told 1% less (two requests of slack per window, one for
			// the weighting and one for the float rounding of x/time/rate's schedule), it never is.
			told = limit * 0.99
		}
		for _, client := range []struct {
			name  string
			opt   Option
			burst int
		}{
			{"token-bucket", WithTokenBucket(told, clientBurst), clientBurst},
			{"leaky-bucket", WithLeakyBucket(told, n), 1},
		} {
			t.Run(alg+"/"+client.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					base, lim := limitedHandler(t, []testserver.Rule{{
						Algorithm: alg, Limit: limit, Window: time.Second, Burst: serverBurst,
					}})
					obs := &counter{}
					c := New(WithBase(base), client.opt, WithObserver(obs))
					start := time.Now()
					statuses := runBatch(t, c, "http://api.test/items", n, workers)
					elapsed := time.Since(start)

					assert.Equal(t, map[int]int{http.StatusOK: n}, statuses)
					assert.Zero(t, obs.status429.Load(), "429s drawn")
					assert.Zero(t, lim.Stats().Rules["default"].Denied, "denials at the server")
					physical := time.Duration(float64(n-client.burst) / told * float64(time.Second))
					assert.LessOrEqual(t, elapsed, physical+physical/100, "elapsed %v vs physical %v", elapsed, physical)
				})
			})
		}
	}
}

// TestRetryAfterHonoured: without a pace, a 429 is retried no earlier than its Retry-After, and the
// retry is admitted.
func TestRetryAfterHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu       sync.Mutex
			arrivals []testserver.Arrival
		)
		base, _ := limitedHandler(t, []testserver.Rule{{Algorithm: algorithm.NameFixedWindow, Limit: 2, Window: 10 * time.Second}},
			testserver.WithRequestHook(func(now time.Time, r *http.Request, res testserver.Result) {
				mu.Lock()
				defer mu.Unlock()
				arrivals = append(arrivals, testserver.Arrival{Time: now, Allowed: res.Allowed, RetryAfter: res.RetryAfter})
			}))
		c := New(WithBase(base), WithoutPace())
		time.Sleep(time.Until(time.Now().Truncate(10 * time.Second).Add(10 * time.Second))) // a window start
		for range 3 {
			resp, err := c.Get("http://api.test/")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		}
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, arrivals, 4, "two admitted, one throttled, its retry admitted")
		assert.False(t, arrivals[2].Allowed)
		assert.True(t, arrivals[3].Allowed)
		assert.GreaterOrEqual(t, arrivals[3].Time.Sub(arrivals[2].Time), arrivals[2].RetryAfter,
			"the retry came before Retry-After")
	})
}

// TestRetryAfterPausesSiblings: a Retry-After seen by one request holds back the others on the
// same host, so they do not hammer a server that asked for quiet.
func TestRetryAfterPausesSiblings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, lim := limitedHandler(t, []testserver.Rule{{Algorithm: algorithm.NameFixedWindow, Limit: 5, Window: time.Minute}})
		c := New(WithBase(base), WithRetry(retry.WithMaxAttempts(10), retry.WithMaxElapsed(0)))
		time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)))
		statuses := runBatch(t, c, "http://api.test/", 20, 8)
		assert.Equal(t, map[int]int{http.StatusOK: 20}, statuses)
		// Without the shared pause each of the 8 workers would draw its own 429s every window.
		denied := lim.Stats().Rules["default"].Denied
		assert.LessOrEqual(t, denied, int64(8*3), "denials: %d", denied)
	})
}

// TestBodyIdenticalOnEveryAttempt: a POST with a body that is retried sends the same bytes each
// time.
func TestBodyIdenticalOnEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu     sync.Mutex
			bodies []string
		)
		calls := 0
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			b, _ := io.ReadAll(req.Body)
			req.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			bodies = append(bodies, string(b))
			calls++
			if calls < 3 {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody}, nil
			}
			return &http.Response{StatusCode: http.StatusCreated, Header: http.Header{}, Body: http.NoBody}, nil
		})
		c := New(WithBase(base))
		payload := strings.Repeat("steady ", 150)
		resp, err := c.Post("http://api.test/items", "text/plain", strings.NewReader(payload))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, []string{payload, payload, payload}, bodies)
	})
}

// TestCancelWhileThrottled: a request waiting out a pause returns promptly when its context is
// cancelled, with its body closed and nothing sent.
func TestCancelWhileThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}, nil
		})
		tr := NewTransport(base, WithMaxWait(0)) // wait out any pause, until the context ends
		tr.Throttle().Pause("api.test", time.Now().Add(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		body := &trackedBody{Reader: strings.NewReader("x")}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/", body)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			_, err := tr.RoundTrip(req)
			done <- err
		}()
		synctest.Wait()
		start := time.Now()
		cancel()
		err = <-done
		assert.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, time.Since(start), "returned at once on cancel")
		assert.True(t, body.closed.Load(), "request body closed")
		assert.Zero(t, sent)
	})
}

// TestInvalidOptions: bad options never panic; Validate names them and every request fails with
// ErrInvalidOption, body closed, nothing sent.
func TestInvalidOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		opt  Option
		want string
	}{
		{"negative rate", WithTokenBucket(-1, 1), "-1"},
		{"zero burst", WithTokenBucket(10, 0), "WithTokenBucket(10, 0)"},
		{"NaN leaky rate", WithLeakyBucket(nanRate(), 1), "NaN"},
		{"negative backlog", WithLeakyBucket(5, -3), "-3"},
		{"nil key func", WithKeyFunc(nil), "WithKeyFunc"},
		{"zero max keys", WithMaxKeys(0), "WithMaxKeys(0)"},
		{"zero in flight", WithMaxInFlight(0), "WithMaxInFlight(0)"},
		{"negative waiting", WithMaxWaiting(-1), "WithMaxWaiting(-1)"},
		{"bad retry option", WithRetry(retry.WithMaxAttempts(-2)), "-2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.opt)
			require.ErrorIs(t, err, ErrInvalidOption)
			assert.Contains(t, err.Error(), tt.want)

			sent := false
			tr := NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
				sent = true
				return nil, errors.New("unreachable")
			}), tt.opt)
			body := &trackedBody{Reader: strings.NewReader("x")}
			req, _ := http.NewRequest(http.MethodPost, "http://api.test/", body)
			resp, err := tr.RoundTrip(req)
			assert.Nil(t, resp)
			assert.ErrorIs(t, err, ErrInvalidOption)
			assert.True(t, body.closed.Load())
			assert.False(t, sent)
		})
	}
	assert.NoError(t, Validate())
}

func nanRate() float64 { z := 0.0; return z / z }

// TestQueueOrderAndObserver: with WithMaxInFlight(1) requests are served one at a time in arrival
// order, and the observer hears of the waits.
func TestQueueOrderAndObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex
			order []string
		)
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			order = append(order, req.URL.Path)
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(nil))}, nil
		})
		obs := &counter{}
		tr := NewTransport(base, WithMaxInFlight(1), WithObserver(obs))
		c := &http.Client{Transport: tr}
		var wg sync.WaitGroup
		want := []string{}
		for i := range 20 {
			path := fmt.Sprintf("/%d", i)
			want = append(want, path)
			wg.Go(func() {
				resp, err := c.Get("http://api.test" + path)
				if assert.NoError(t, err) {
					resp.Body.Close()
				}
			})
			synctest.Wait() // each request is in line before the next arrives
		}
		wg.Wait()
		assert.Equal(t, want, order)
		assert.Equal(t, int64(19), obs.queued.Load())
		assert.Equal(t, queue.Stats{Admitted: 20}, tr.Queue().Stats())
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLongPauseFailsFast: by default a pause longer than DefaultMaxWait fails the request at once,
// with a matchable error, nothing sent and the body closed, instead of blocking.
func TestLongPauseFailsFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		tr := NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}, nil
		}))
		tr.Throttle().Pause("api.test", time.Now().Add(time.Hour))
		body := &trackedBody{Reader: strings.NewReader("x")}
		req, err := http.NewRequest(http.MethodPut, "http://api.test/", body)
		require.NoError(t, err)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		assert.Nil(t, resp)
		assert.ErrorIs(t, err, throttle.ErrWaitTooLong)
		assert.Zero(t, time.Since(start))
		assert.True(t, body.closed.Load())
		assert.Zero(t, sent)
	})
}

// TestMaxWaitingZero: WithMaxWaiting(0) means no waiting line: a request that finds every place
// taken is refused at once.
func TestMaxWaitingZero(t *testing.T) {
	tr := NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok"))}, nil
	}), WithMaxInFlight(1), WithMaxWaiting(0))
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	first, err := tr.RoundTrip(req)
	require.NoError(t, err)
	defer first.Body.Close() // holds the only place until closed
	_, err = tr.RoundTrip(req)
	assert.ErrorIs(t, err, queue.ErrQueueFull)
}

// TestZeroTransportAndNilRequest: the zero Transport and a nil request give errors, not panics.
func TestZeroTransportAndNilRequest(t *testing.T) {
	body := &trackedBody{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest(http.MethodPost, "http://api.test/", body)
	var zero Transport
	resp, err := zero.RoundTrip(req)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, ErrInvalidOption)
	assert.True(t, body.closed.Load())
	zero.CloseIdleConnections()

	resp, err = NewTransport(nil).RoundTrip(nil)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, ErrNilRequest)
}
