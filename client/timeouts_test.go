package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steadyhttp/steady/request"
	"github.com/steadyhttp/steady/retry"
)

// TestTimeoutsBoundTheStack (docs/timeouts.md): http.Client.Timeout reaches every layer as the
// request context's deadline. The throttle refuses at once a pause that ends after it, the retry
// layer gives back at once a response whose Retry-After ends after it, the queue waits at most
// until it, and a per-attempt timeout abandons a slow attempt well before it.
func TestTimeoutsBoundTheStack(t *testing.T) {
	const timeout = 10 * time.Second
	tests := []struct {
		name string
		// server answers the n-th arrival (from 1); nil: 200
		server   func(n int32, w http.ResponseWriter, r *http.Request)
		setup    func(tr *Transport)
		opts     []Option
		ctx      func(context.Context) context.Context
		wantErr  error // nil: wantCode
		wantCode int
		wantAt   time.Duration
		wantSent int32
	}{
		{name: "a pause past the deadline: refused at once",
			setup:   func(tr *Transport) { tr.Throttle().Pause("api.test", time.Now().Add(30*time.Second)) },
			wantErr: context.DeadlineExceeded, wantAt: 0, wantSent: 0},
		{name: "a pause within it: waited out",
			setup:    func(tr *Transport) { tr.Throttle().Pause("api.test", time.Now().Add(5*time.Second)) },
			wantCode: 200, wantAt: 5 * time.Second, wantSent: 1},
		{name: "Retry-After past the deadline: the 429 at once",
			server: func(n int32, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "30")
					w.WriteHeader(http.StatusTooManyRequests)
				}
			},
			wantCode: 429, wantAt: 0, wantSent: 1},
		{name: "a hanging server: the client's timeout",
			server: func(n int32, w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			opts:   []Option{WithRetry(retry.WithMaxAttempts(1))},
			// http.Client wraps its timeout as an error that matches DeadlineExceeded
			wantErr: context.DeadlineExceeded, wantAt: timeout, wantSent: 1},
		{name: "a hanging first attempt: the attempt timeout, then a retry within the deadline",
			server: func(n int32, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					<-r.Context().Done()
				}
			},
			opts:     []Option{WithRetry(retry.WithAttemptTimeout(2*time.Second), retry.WithBaseDelay(time.Nanosecond), retry.WithMaxDelay(time.Nanosecond))},
			wantCode: 200, wantAt: 2 * time.Second, wantSent: 2},
		{name: "the same, the attempt timeout set for the request",
			server: func(n int32, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					<-r.Context().Done()
				}
			},
			opts:     []Option{WithRetry(retry.WithBaseDelay(time.Nanosecond), retry.WithMaxDelay(time.Nanosecond))},
			ctx:      func(ctx context.Context) context.Context { return request.WithAttemptTimeout(ctx, 3*time.Second) },
			wantCode: 200, wantAt: 3 * time.Second, wantSent: 2},
		{name: "the queue waits at most until the deadline",
			opts: []Option{WithMaxInFlight(1)},
			setup: func(tr *Transport) {
				_, err := tr.Queue().Acquire(context.Background()) // the only place, never released
				if err != nil {
					panic(err)
				}
			},
			wantErr: context.DeadlineExceeded, wantAt: timeout, wantSent: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var arrivals atomic.Int32
				base := ctxTransport{handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := arrivals.Add(1)
					if tt.server != nil {
						tt.server(n, w, r)
					}
				})}}
				tr := NewTransport(base, append([]Option{WithoutPace()}, tt.opts...)...)
				require.NoError(t, tr.Err())
				if tt.setup != nil {
					tt.setup(tr)
				}
				c := &http.Client{Transport: tr, Timeout: timeout}
				ctx := context.Background()
				if tt.ctx != nil {
					ctx = tt.ctx(ctx)
				}
				req, err := http.NewRequestWithContext(ctx, "GET", "http://api.test/items", nil)
				require.NoError(t, err)
				start := time.Now()
				resp, err := c.Do(req)
				assert.Equal(t, tt.wantAt, time.Since(start).Truncate(time.Millisecond), "backoffs of 1ns aside")
				assert.Equal(t, tt.wantSent, arrivals.Load())
				if tt.wantErr != nil {
					require.Error(t, err)
					assert.True(t, errors.Is(err, tt.wantErr), "%v", err)
					return
				}
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				assert.Equal(t, tt.wantCode, resp.StatusCode)
			})
		})
	}
}

// ctxTransport is a handlerTransport that, like a network transport, fails with the request
// context's error when the context ended while the handler ran.
type ctxTransport struct{ h handlerTransport }

func (t ctxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.h.RoundTrip(req)
	if cerr := req.Context().Err(); cerr != nil {
		resp.Body.Close()
		return nil, cerr
	}
	return resp, err
}
