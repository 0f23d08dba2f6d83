package breaker

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/request"
	"github.com/steadyhttp/steady/retry"
)

// outage is an in-memory server that answers 503 until up, and 200 after; it counts arrivals per
// host.
type outage struct {
	up       time.Time
	mu       sync.Mutex
	arrivals map[string]int
}

func (o *outage) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	o.mu.Lock()
	if o.arrivals == nil {
		o.arrivals = map[string]int{}
	}
	o.arrivals[req.URL.Host]++
	o.mu.Unlock()
	code := http.StatusOK
	if time.Now().Before(o.up) && req.URL.Host == "down.test" {
		code = http.StatusServiceUnavailable
	}
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

func (o *outage) count(host string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.arrivals[host]
}

type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func get(t *testing.T, rt http.RoundTripper, ctx context.Context, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	require.NoError(t, err)
	return rt.RoundTrip(req)
}

// TestFailFast: once the circuit is open, requests fail at once with ErrCircuitOpen, nothing is
// sent and the body is closed; other keys go on; after the cool-down a probe closes the circuit.
func TestFailFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &outage{up: time.Now().Add(3 * time.Second)}
		b := newBreaker(t, WithMode(FailFast), WithMinRequests(5), WithCooldown(5*time.Second))
		rt := NewTransport(srv, b)
		ctx := context.Background()
		for range 5 {
			resp, err := get(t, rt, ctx, "http://down.test/")
			require.NoError(t, err)
			assert.Equal(t, 503, resp.StatusCode)
		}
		body := &trackedBody{Reader: strings.NewReader("x")}
		req, err := http.NewRequestWithContext(ctx, "PUT", "http://down.test/", body)
		require.NoError(t, err)
		resp, err := rt.RoundTrip(req)
		assert.Nil(t, resp)
		assert.ErrorIs(t, err, ErrCircuitOpen)
		assert.True(t, body.closed.Load())
		assert.Equal(t, 5, srv.count("down.test"), "nothing sent while open")

		resp, err = get(t, rt, ctx, "http://up.test/")
		require.NoError(t, err, "another key is not affected")
		assert.Equal(t, 200, resp.StatusCode)

		time.Sleep(5 * time.Second) // the server is back; the cool-down ends
		resp, err = get(t, rt, ctx, "http://down.test/")
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode)
		st, _ := b.State("down.test", time.Now())
		assert.Equal(t, Closed, st)
	})
}

// TestPauseLosesNothing: in Pause mode, a batch of requests (with retries above the breaker, as in
// steady's stack) across a 3 s outage all succeed; while the circuit is open the server sees only
// the probes.
func TestPauseLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			outageLen = 3 * time.Second
			cooldown  = time.Second
			workers   = 8
			perWorker = 20
		)
		start := time.Now()
		srv := &outage{up: start.Add(outageLen)}
		var events []Event
		var mu sync.Mutex
		b := newBreaker(t, WithMinRequests(5), WithCooldown(cooldown), WithObserver(func(e Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}))
		// A request may find the server down once, and then be the probe of every cool-down
		// until it is back (which request goes as the probe is whichever asks first): the
		// attempts cover that, 2 + outage/cool-down, so that the pause loses nothing.
		attempts := 2 + int(outageLen/cooldown)
		rt, err := retry.NewTransport(NewTransport(srv, b), retry.WithMaxAttempts(attempts), retry.WithBudget(nil),
			retry.WithBaseDelay(10*time.Millisecond), retry.WithMaxDelay(10*time.Millisecond))
		require.NoError(t, err)
		var ok atomic.Int32
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range perWorker {
					resp, err := get(t, rt, context.Background(), "http://down.test/")
					if err == nil && resp.StatusCode == 200 {
						ok.Add(1)
					}
					time.Sleep(100 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int32(workers*perWorker), ok.Load(), "every request succeeded")
		// Model: the circuit opens within the first round of requests (5 failures), then every
		// cool-down lets one probe through until the server is up at 3 s: at most
		// outage/cooldown + 1 probes while down, plus the requests that opened it.
		failed := 0
		mu.Lock()
		for _, e := range events {
			if e.To == Open && e.From == Closed {
				failed += e.Failures
			}
		}
		probes := 0
		for _, e := range events {
			if e.From == HalfOpen {
				probes++
			}
		}
		mu.Unlock()
		assert.LessOrEqual(t, probes, int(outageLen/cooldown)+1)
		// The server saw the successes, the failures that opened the circuit, the failed probes
		// (every probe but the last), and at most one request per other worker that was let go
		// while the circuit was still closed and failed after it opened (not counted by it).
		sawFailures := srv.count("down.test") - workers*perWorker
		assert.GreaterOrEqual(t, sawFailures, failed+probes-1)
		assert.LessOrEqual(t, sawFailures, failed+probes-1+workers-1)
	})
}

// TestPauseRefusesWhenTheDeadlineComesFirst: a request whose deadline ends before the cool-down is
// refused at once; one whose context is cancelled while it waits returns the context's error.
func TestPauseRefusesWhenTheDeadlineComesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &outage{up: time.Now().Add(time.Hour)}
		b := newBreaker(t, WithMinRequests(1), WithCooldown(time.Minute))
		rt := NewTransport(srv, b)
		_, err := get(t, rt, context.Background(), "http://down.test/")
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		_, err = get(t, rt, ctx, "http://down.test/")
		assert.ErrorIs(t, err, ErrCircuitOpen)
		assert.Zero(t, time.Since(start), "refused at once")

		ctx2, cancel2 := context.WithCancel(context.Background())
		go func() {
			time.Sleep(10 * time.Second)
			cancel2()
		}()
		_, err = get(t, rt, ctx2, "http://down.test/")
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 10*time.Second, time.Since(start))
		assert.Equal(t, 1, srv.count("down.test"))
	})
}

// TestRequestKey: request.WithKey chooses the circuit; an invalid setting refuses the request.
func TestRequestKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &outage{up: time.Now().Add(time.Hour)}
		b := newBreaker(t, WithMode(FailFast), WithMinRequests(1), WithCooldown(time.Minute))
		rt := NewTransport(srv, b)
		_, err := get(t, rt, request.WithKey(context.Background(), "tenant-a"), "http://down.test/")
		require.NoError(t, err)
		_, err = get(t, rt, request.WithKey(context.Background(), "tenant-a"), "http://up.test/")
		assert.ErrorIs(t, err, ErrCircuitOpen, "tenant-a is open whatever the host")
		_, err = get(t, rt, context.Background(), "http://down.test/")
		assert.NoError(t, err, "the host's own circuit is closed")
		_, err = get(t, rt, request.WithKey(context.Background(), ""), "http://up.test/")
		assert.True(t, errors.Is(err, request.ErrInvalid))
	})
}
