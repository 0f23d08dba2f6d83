package retry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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

// slowRT answers attempt n after delays[n] (the last one repeating), or fails with its context's
// error when that ends first, as a real transport does. Its response bodies fail to read once the
// attempt's context has ended. It records each attempt's context.
type slowRT struct {
	delays []time.Duration
	mu     sync.Mutex
	ctxs   []context.Context
}

func (s *slowRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	s.mu.Lock()
	n := len(s.ctxs)
	s.ctxs = append(s.ctxs, req.Context())
	s.mu.Unlock()
	t := time.NewTimer(s.delays[min(n, len(s.delays)-1)])
	defer t.Stop()
	select {
	case <-req.Context().Done():
		return nil, req.Context().Err()
	case <-t.C:
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Request: req,
		Body: &ctxBody{ctx: req.Context(), r: strings.NewReader("ok")}}, nil
}

func (s *slowRT) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ctxs)
}

// ctxBody reads r while ctx lives.
type ctxBody struct {
	ctx context.Context
	r   io.Reader
}

func (b *ctxBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	return b.r.Read(p)
}
func (b *ctxBody) Close() error { return nil }

func TestAttemptTimeout(t *testing.T) {
	const timeout = 2 * time.Second
	tests := []struct {
		name      string
		method    string
		delays    []time.Duration
		ctx       func(context.Context) context.Context
		wantCalls int
		wantErr   []error // nil: a 200
		wantAt    time.Duration
	}{
		{"a slow first attempt is abandoned and retried", "GET", []time.Duration{time.Minute, time.Second}, nil,
			2, nil, timeout + time.Second},
		{"in time: one attempt", "GET", []time.Duration{timeout - time.Millisecond}, nil, 1, nil, timeout - time.Millisecond},
		{"every attempt too slow", "GET", []time.Duration{time.Minute}, nil,
			retry.DefaultMaxAttempts, []error{retry.ErrAttemptTimeout, retry.ErrAttemptsExhausted}, retry.DefaultMaxAttempts * timeout},
		{"a POST that timed out may have been processed", "POST", []time.Duration{time.Minute}, nil,
			1, []error{retry.ErrAttemptTimeout, retry.ErrNotIdempotent}, timeout},
		{"request.WithAttemptTimeout(0) lifts it", "GET", []time.Duration{time.Minute},
			func(ctx context.Context) context.Context { return request.WithAttemptTimeout(ctx, 0) }, 1, nil, time.Minute},
		{"request.WithAttemptTimeout shorter", "GET", []time.Duration{time.Minute, 0},
			func(ctx context.Context) context.Context { return request.WithAttemptTimeout(ctx, time.Second) }, 2, nil, time.Second},
		{"the caller's deadline comes first: its error, no retry", "GET", []time.Duration{time.Minute},
			func(ctx context.Context) context.Context {
				ctx, cancel := context.WithTimeout(ctx, time.Second)
				t.Cleanup(cancel)
				return ctx
			}, 1, []error{context.DeadlineExceeded}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &slowRT{delays: tt.delays}
				tr := newTransport(t, base, retry.WithAttemptTimeout(timeout), retry.WithBaseDelay(time.Nanosecond),
					retry.WithMaxDelay(time.Nanosecond), retry.WithBudget(nil))
				ctx := context.Background()
				if tt.ctx != nil {
					ctx = tt.ctx(ctx)
				}
				req, err := http.NewRequestWithContext(ctx, tt.method, "http://api.test/", nil)
				require.NoError(t, err)
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				assert.Equal(t, tt.wantAt, time.Since(start).Truncate(time.Millisecond))
				assert.Equal(t, tt.wantCalls, base.calls())
				if tt.wantErr == nil {
					require.NoError(t, err)
					body, err := io.ReadAll(resp.Body)
					require.NoError(t, err)
					assert.Equal(t, "ok", string(body))
					require.NoError(t, resp.Body.Close())
					return
				}
				assert.Nil(t, resp)
				for _, want := range tt.wantErr {
					assert.ErrorIs(t, err, want)
				}
			})
		})
	}
}

// TestAttemptTimeoutSparesTheBody: the timeout ends with the response headers; the body is read
// after it passed, and closing the body releases the attempt's context.
func TestAttemptTimeoutSparesTheBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &slowRT{delays: []time.Duration{time.Second}}
		tr := newTransport(t, base, retry.WithAttemptTimeout(2*time.Second))
		resp, err := tr.RoundTrip(must(http.NewRequest("GET", "http://api.test/", nil)))
		require.NoError(t, err)
		time.Sleep(time.Minute) // a slow reader
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "ok", string(body))
		attemptCtx := base.ctxs[0]
		assert.NoError(t, attemptCtx.Err(), "alive until the body is closed")
		require.NoError(t, resp.Body.Close())
		assert.Error(t, attemptCtx.Err(), "released with the body")
	})
}

// TestAttemptTimeoutOverLoopback: against a loopback server that never answers the first attempt,
// a real http.Transport abandons it at the timeout and the retry gets the answer. Nothing is
// asserted about durations.
func TestAttemptTimeoutOverLoopback(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done() // the client hangs up at its attempt timeout
			return
		}
		_, _ = io.WriteString(w, "second")
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := newTransport(t, base, retry.WithAttemptTimeout(100*time.Millisecond))
	resp, err := tr.RoundTrip(must(http.NewRequest("GET", srv.URL, nil)))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "second", string(body))
	assert.Equal(t, int32(2), n.Load())
}

// TestRequestAttempts: request.WithAttempts replaces the Transport's maximum for one request.
func TestRequestAttempts(t *testing.T) {
	tests := []struct {
		name      string
		ctx       context.Context
		wantCalls int
		wantErr   error
	}{
		{"default", context.Background(), 3, nil},
		{"no retry", request.WithAttempts(context.Background(), 1), 1, nil},
		{"more than the Transport's", request.WithAttempts(context.Background(), 6), 6, nil},
		{"invalid: nothing sent", request.WithAttempts(context.Background(), 0), 0, request.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &stubRT{status: 503}
			tr := newTransport(t, base, retry.WithMaxAttempts(3), retry.WithBudget(nil))
			body := newTrackedBody(strings.NewReader("x"))
			req, err := http.NewRequestWithContext(tt.ctx, "PUT", "http://api.test/", body)
			require.NoError(t, err)
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("x")), nil }
			resp, err := tr.RoundTrip(req)
			assert.Equal(t, tt.wantCalls, base.calls)
			assert.True(t, body.closed.Load())
			if tt.wantErr != nil {
				assert.Nil(t, resp)
				assert.True(t, errors.Is(err, tt.wantErr))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 503, resp.StatusCode, "the last response, when attempts run out")
		})
	}
}
