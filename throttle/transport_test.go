package throttle

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTripFunc is an in-memory RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func response(status int, header http.Header) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: status, Header: header, Body: http.NoBody}
}

// trackedBody records whether it was closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func newRequest(t *testing.T, ctx context.Context, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	return req
}

// TestTransportRetryAfterPausesKey: a 429 with Retry-After holds back the siblings on the same
// host, in flight and new, but not another host. A date holds a second longer than the dates'
// difference: its instant may lie up to a second beyond it (ratelimitheader.DateGrain).
func TestTransportRetryAfterPausesKey(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header func(now time.Time) http.Header
		pause  time.Duration
	}{
		{"delay-seconds", func(time.Time) http.Header { return http.Header{"Retry-After": {"2"}} }, 2 * time.Second},
		{"HTTP-date", func(now time.Time) http.Header {
			return http.Header{"Retry-After": {now.Add(2 * time.Second).UTC().Format(http.TimeFormat)}}
		}, 3 * time.Second},
		{"HTTP-date with a skewed Date", func(now time.Time) http.Header {
			skewed := now.Add(time.Hour) // the server's clock runs an hour ahead
			return http.Header{
				"Retry-After": {skewed.Add(2 * time.Second).UTC().Format(http.TimeFormat)},
				"Date":        {skewed.UTC().Format(http.TimeFormat)},
			}
		}, 3 * time.Second},
		{"on a 503", func(time.Time) http.Header { return http.Header{"Retry-After": {"2"}} }, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var mu sync.Mutex
				sent := map[string][]time.Duration{}
				first := true
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					mu.Lock()
					defer mu.Unlock()
					sent[r.URL.Host] = append(sent[r.URL.Host], time.Since(start))
					if r.URL.Host == "a.test" && first {
						first = false
						status := http.StatusTooManyRequests
						if strings.Contains(tt.name, "503") {
							status = http.StatusServiceUnavailable
						}
						return response(status, tt.header(time.Now())), nil
					}
					return response(http.StatusOK, nil), nil
				})
				th := newThrottle(t)
				rt := NewTransport(base, th)
				resp, err := rt.RoundTrip(newRequest(t, context.Background(), "http://a.test/x"))
				require.NoError(t, err)
				assert.NotEqual(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, start.Add(tt.pause), th.PausedUntil("a.test"))

				var wg sync.WaitGroup
				for _, u := range []string{"http://a.test/1", "http://b.test/1", "http://a.test/2"} {
					wg.Go(func() {
						resp, err := rt.RoundTrip(newRequest(t, context.Background(), u))
						if assert.NoError(t, err) {
							assert.Equal(t, http.StatusOK, resp.StatusCode)
						}
					})
				}
				wg.Wait()
				assert.Equal(t, []time.Duration{0, tt.pause, tt.pause}, sent["a.test"])
				assert.Equal(t, []time.Duration{0}, sent["b.test"])
			})
		})
	}
}

func TestTransportIgnoresUselessRetryAfter(t *testing.T) {
	for _, v := range []string{"0", "-5", "soon", "Fri, 31 Dec 1999 23:00:00 GMT"} {
		t.Run(v, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(*http.Request) (*http.Response, error) {
					return response(http.StatusTooManyRequests, http.Header{"Retry-After": {v}}), nil
				})
				th := newThrottle(t)
				_, err := NewTransport(base, th).RoundTrip(newRequest(t, context.Background(), "http://a.test/"))
				require.NoError(t, err)
				assert.True(t, th.PausedUntil("a.test").IsZero())
			})
		})
	}
}

// TestTransportRetryAfterOnSuccessPausesNothing: a Retry-After on a success (a 202's hint of when
// to poll a long-running operation, a 301's) is no refusal: the key is not paused.
func TestTransportRetryAfterOnSuccessPausesNothing(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusAccepted, http.StatusMovedPermanently} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(*http.Request) (*http.Response, error) {
					return response(status, http.Header{"Retry-After": {"30"}}), nil
				})
				th := newThrottle(t)
				_, err := NewTransport(base, th).RoundTrip(newRequest(t, context.Background(), "http://a.test/"))
				require.NoError(t, err)
				assert.True(t, th.PausedUntil("a.test").IsZero())
			})
		})
	}
}

// learningLimiter is a Limiter that records what it observes.
type learningLimiter struct {
	Limiter
	mu   sync.Mutex
	seen []string
}

func (l *learningLimiter) Observe(now time.Time, resp *http.Response, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		l.seen = append(l.seen, "error: "+err.Error())
	default:
		l.seen = append(l.seen, resp.Status)
	}
}

func TestTransportFeedsLearner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb, err := NewTokenBucket(10, 1)
		require.NoError(t, err)
		learner := &learningLimiter{Limiter: tb}
		boom := errors.New("connection reset")
		n := 0
		base := roundTripFunc(func(*http.Request) (*http.Response, error) {
			n++
			switch n {
			case 1:
				return &http.Response{Status: "200 OK", StatusCode: 200, Header: http.Header{}, Body: http.NoBody}, nil
			case 2:
				return nil, boom
			default:
				return &http.Response{Status: "429 Too Many Requests", StatusCode: 429, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody}, nil
			}
		})
		th := newThrottle(t, WithLimiter(func(string) (Limiter, error) { return learner, nil }))
		rt := NewTransport(base, th)
		start := time.Now()
		for range 3 {
			_, _ = rt.RoundTrip(newRequest(t, context.Background(), "http://a.test/"))
		}
		// Refused attempts are not observed.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = rt.RoundTrip(newRequest(t, ctx, "http://a.test/"))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []string{"200 OK", "error: connection reset", "429 Too Many Requests"}, learner.seen)
		assert.Equal(t, 200*time.Millisecond, time.Since(start), "paced by the learner's limiter")
	})
}

func TestTransportRefusalClosesBody(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		opts  []Option
		setup func(th *Throttle)
		ctx   context.Context
		url   string
		want  error
	}{
		{"ended context", nil, nil, cancelled, "http://a.test/", context.Canceled},
		{"paused past the deadline", nil, func(th *Throttle) { th.Pause("a.test", time.Now().Add(time.Hour)) }, nil, "http://a.test/", context.DeadlineExceeded},
		{"backlog full", []Option{leaky(1, 0)}, func(th *Throttle) { _ = th.Wait(context.Background(), "a.test") }, nil, "http://a.test/", ErrBacklogFull},
		{"factory error", []Option{WithLimiter(func(string) (Limiter, error) { return nil, ErrInvalidRate })}, nil, nil, "http://a.test/", ErrInvalidRate},
		{"nil URL", nil, nil, nil, "", ErrNilRequestURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newThrottle(t, tt.opts...)
			if tt.setup != nil {
				tt.setup(th)
			}
			called := false
			rt := NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
				called = true
				return response(http.StatusOK, nil), nil
			}), th)
			ctx := tt.ctx
			if ctx == nil {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
			}
			body := &trackedBody{Reader: strings.NewReader("payload")}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://a.test/", body)
			require.NoError(t, err)
			if tt.url == "" {
				req.URL = nil
			}
			resp, err := rt.RoundTrip(req)
			assert.Nil(t, resp)
			assert.ErrorIs(t, err, tt.want)
			assert.False(t, called, "refused without calling next")
			assert.True(t, body.closed.Load(), "request body closed")
		})
	}
}

func TestTransportTooManyKeysClosesBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t, WithMaxKeys(1))
		th.Pause("a.test", time.Now().Add(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- th.Wait(ctx, "a.test") }()
		synctest.Wait()
		rt := NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
			t.Error("next called")
			return nil, errors.New("unreachable")
		}), th)
		body := &trackedBody{Reader: strings.NewReader("x")}
		req, err := http.NewRequest(http.MethodPut, "http://b.test/", body)
		require.NoError(t, err)
		_, err = rt.RoundTrip(req)
		assert.ErrorIs(t, err, ErrTooManyKeys)
		assert.True(t, body.closed.Load())
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
}

func TestTransportKeyFuncAndRequestUntouched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		sent := map[string][]time.Duration{}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			tok := r.Header.Get("Authorization")
			sent[tok] = append(sent[tok], time.Since(start))
			if tok == "t1" && len(sent[tok]) == 1 {
				return response(http.StatusTooManyRequests, http.Header{"Retry-After": {"5"}}), nil
			}
			return response(http.StatusOK, nil), nil
		})
		th := newThrottle(t, WithKeyFunc(func(r *http.Request) string { return r.Header.Get("Authorization") }))
		rt := NewTransport(base, th)
		do := func(token string) {
			req := newRequest(t, context.Background(), "http://api.test/v1?q=1")
			req.Header.Set("Authorization", token)
			before := req.Clone(context.Background())
			_, err := rt.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, before.Header, req.Header)
			assert.Equal(t, before.URL, req.URL)
			assert.Equal(t, before.Method, req.Method)
		}
		do("t1")
		do("t2") // same host, another token: not paused
		do("t1")
		assert.Equal(t, []time.Duration{0, 5 * time.Second}, sent["t1"])
		assert.Equal(t, []time.Duration{0}, sent["t2"])
	})
}

func TestNewTransportDefaults(t *testing.T) {
	rt := NewTransport(nil, nil)
	tr, ok := rt.(*transport)
	require.True(t, ok)
	assert.Equal(t, http.DefaultTransport, tr.next)
	require.NotNil(t, tr.t)
	assert.Equal(t, DefaultMaxKeys, tr.t.maxKeys)
}

// TestTransportLoopback runs the Transport over real HTTP against a loopback server that answers
// its first request with 429 and Retry-After: 3600.
func TestTransportLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "other")
	}))
	defer other.Close()

	th := newThrottle(t)
	client := &http.Client{Transport: NewTransport(srv.Client().Transport, th)}
	defer client.CloseIdleConnections()

	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)

	host := mustHost(t, srv.URL)
	until := th.PausedUntil(host)
	require.False(t, until.IsZero(), "the host is paused")
	// Bounds far apart, so no scheduling delay can matter.
	assert.Greater(t, time.Until(until), 50*time.Minute)
	assert.LessOrEqual(t, time.Until(until), time.Hour)

	// A request that cannot wait an hour is refused at once, without reaching the server.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err = client.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	var wd *WouldExceedDeadlineError
	require.ErrorAs(t, err, &wd)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Greater(t, wd.Wait, 50*time.Minute)
	assert.Equal(t, int32(1), hits.Load(), "the server saw only the first request")

	// Another host is not held back.
	resp, err = client.Get(other.URL)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "other", string(b))
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}

type idleCloser struct {
	roundTripFunc
	closed bool
}

func (c *idleCloser) CloseIdleConnections() { c.closed = true }

func TestTransportCloseIdleConnections(t *testing.T) {
	next := &idleCloser{}
	client := &http.Client{Transport: NewTransport(next, nil)}
	client.CloseIdleConnections()
	assert.True(t, next.closed)
	// A next RoundTripper without the method is fine too.
	NewTransport(roundTripFunc(nil), nil).(*transport).CloseIdleConnections()
}
